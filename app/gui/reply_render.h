#pragma once
// One block of a reply (see markdown_blocks.h) as Qt rich text for a read-only TextEdit:
// prose through Qt's Markdown importer with raw HTML off, then styled (links in the theme's
// colour and only http(s)/mailto kept as links, images shown as their text, inline code on a
// background, tables with borders, padding and a header row, paragraph spacing) and with its
// math rendered; code highlighted; display math laid out. Nothing of the source becomes markup:
// what is not Markdown is escaped text.
#include <QString>

#include "gui/code_highlighter.h"
#include "gui/markdown_blocks.h"

namespace day0::app {

QString render_prose_html(const QString& markdown, const RenderPalette& palette, int pixelSize);
QString render_code_html(const QString& code, const QString& language, const RenderPalette& palette);
QString render_math_html(const QString& tex, const RenderPalette& palette, int pixelSize);
// Any block: dispatches on its kind (a quote's Markdown renders as prose).
QString render_block_html(const MarkdownBlock& block, const RenderPalette& palette, int pixelSize);
// Whether a link target may be opened from a reply: http, https and mailto only.
bool is_safe_link(const QString& href);

}  // namespace day0::app
