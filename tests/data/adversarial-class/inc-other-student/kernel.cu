// Attack: another student's submission (victim/kernel.cu, a correct kernel) compiled under this
// student's name: included, it would pass with the victim's work.
// Stopped by: the #include filter, which reads the file as NVRTC does; behind it the compiler's
// sandbox (Landlock) could not open the file either. Expected: breaks the contract, with or without
// a GPU (tests/data/adversarial-class/expected.json).
#include "convscope_kernel.h"

#define CONVSCOPE_BLOCK_X 16
#define CONVSCOPE_BLOCK_Y 16
#define CONVSCOPE_TILE_WIDTH 16
#define CONVSCOPE_TILE_HEIGHT 16

#include "../victim/kernel.cu"
