// Force-included (gcc -include, see the top-level CMakeLists.txt) into the program sources that
// name the shipped models by CONVSCOPE_MODELS_DIR but are not yet written against
// shippedModelsDir(): there the macro stops naming the source tree's folder and names the one
// the running program resolves, so that an installed window lists the installed models.
// Sources that call shippedModelsDir() themselves need none of this.
#pragma once

#include "app/core/util/data_dir.h"

#undef CONVSCOPE_MODELS_DIR
#define CONVSCOPE_MODELS_DIR (::convscope::shippedModelsDir())
