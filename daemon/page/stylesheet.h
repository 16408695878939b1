#pragma once

// The pages' one stylesheet, compiled in and served at kStylesheetPath (render.h): system fonts,
// light and dark (prefers-color-scheme), wide tables scrolling on a phone, a print stylesheet.

#include <string_view>

namespace hubwatch::page {

std::string_view Stylesheet();

}  // namespace hubwatch::page
