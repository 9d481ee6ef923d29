// dgemm_table.gen.h: bootstrap table (one configuration), to be replaced by the output of
// fastgemm-tune --prec d --emit (perf/tune.cu) on the GPU to tune for.
#define FG_DGEMM_TUNED_ON "not tuned"

// The configurations built: X(name, BM, BN, BK, WM, WN, STAGES, FEATURES)
#define FG_DGEMM_CONFIGS(X) \
    X("dmma_128x128x16_w64x32_s3", 128, 128, 16, 64, 32, 3, 0)
// The first of them (the largest block tile)
#define FG_DGEMM_FIRST(X) X("dmma_128x128x16_w64x32_s3", 128, 128, 16, 64, 32, 3, 0)

// The problems measured and the best configuration and split-K for each:
// X(m, n, k, transposes (1: A, 2: B), configuration, splits)
#define FG_DGEMM_TABLE(X) \
    X(4096, 4096, 4096, 0, 0, 1)
