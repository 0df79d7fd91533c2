// day0-render-icon SVG SIZE PNG: renders the app icon at SIZE x SIZE pixels, at build time, for
// the hicolor PNG sizes the package installs beside the scalable SVG. Qt's SVG image plugin
// (libqt6svg6) draws it; no display is needed.
#include <QCoreApplication>
#include <QImage>
#include <QImageReader>
#include <cstdio>

int main(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  bool ok = false;
  const int size = argc == 4 ? QString::fromLocal8Bit(argv[2]).toInt(&ok) : 0;
  if (!ok || size < 16 || size > 1024) {
    std::fprintf(stderr, "usage: day0-render-icon SVG SIZE PNG   (SIZE in 16..1024 pixels)\n");
    return 2;
  }
  QImageReader reader(QString::fromLocal8Bit(argv[1]));
  reader.setScaledSize(QSize(size, size));
  const QImage image = reader.read();
  if (image.isNull()) {
    std::fprintf(stderr, "day0-render-icon: cannot render %s: %s (is Qt's SVG plugin, libqt6svg6, installed?)\n",
                 argv[1], qPrintable(reader.errorString()));
    return 1;
  }
  if (!image.save(QString::fromLocal8Bit(argv[3]), "PNG")) {
    std::fprintf(stderr, "day0-render-icon: cannot write %s\n", argv[3]);
    return 1;
  }
  return 0;
}
