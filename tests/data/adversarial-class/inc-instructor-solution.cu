// Attack: compile the instructor's solution under this student's name: the test plants a correct
// kernel at ../instructor/solution.cu (beside the class folder); included, it would pass.
// Stopped by: the #include filter, which reads the file as NVRTC does; behind it the compiler's
// sandbox (Landlock) could not open the file either. Expected: breaks the contract, with or without
// a GPU (tests/data/adversarial-class/expected.json).
#include "convscope_kernel.h"

#define CONVSCOPE_BLOCK_X 16
#define CONVSCOPE_BLOCK_Y 16
#define CONVSCOPE_TILE_WIDTH 16
#define CONVSCOPE_TILE_HEIGHT 16

#include "../instructor/solution.cu"
