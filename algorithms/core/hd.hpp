#pragma once
// GPUDM_HD marks small functions shared verbatim by CPU backends and CUDA kernels.
#if defined(__CUDACC__)
#define GPUDM_HD __host__ __device__ __forceinline__
#else
#define GPUDM_HD inline
#endif
