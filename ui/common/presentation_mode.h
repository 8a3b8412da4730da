// Presentation mode for class demos: large fonts and a high-contrast palette, readable from the
// back of a room. It changes the application's font and palette only; every widget and chart
// restyles itself from those (charts on QEvent::FontChange / PaletteChange), so nothing else
// needs to know the mode exists.
#pragma once

namespace convscope::ui {

void setPresentationMode(bool on);
bool presentationMode();

}  // namespace convscope::ui
