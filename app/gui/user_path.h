#pragma once
// Paths as people give them: typed or pasted into a path field, or a file:// URL from a dialog
// or a drop.
#include <QString>
#include <QVariant>

namespace day0::app {

// The local path `value` names: a file:// URL decoded, surrounding blanks and matching quotes
// removed, a leading ~ or ~/ made the home folder. Other text is returned as it is (relative
// paths stay relative); empty when `value` holds nothing.
QString localPathFromUser(const QVariant& value);

}  // namespace day0::app
