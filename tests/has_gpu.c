/* has_gpu.c: exit 0 when the CUDA runtime sees a device, else the skip code (for test scripts). */
#include "testutil.h"

int main(void) { return test_gpu_present() ? 0 : TEST_SKIP; }
