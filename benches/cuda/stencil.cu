// CUDA C++ twins of the Rust stencil kernels in gpu-kernels/src/stencil/: the same algorithms
// (PMPP Fig. 8.6, 8.8, 8.10, 8.12), the same tile and block sizes, the same launch-sized shared
// memory, the same arithmetic order. Compiled at run time with NVRTC (without FMA contraction,
// as rustc emits none); the benches append the `extern "C"` entry points, one per kernel, tile
// edge and element type, generated from the Rust constants so no size is written twice.

struct Grid3 {
    unsigned nx, ny, nz;
};

template <typename T>
struct Coeffs {
    T c[7];
};

__device__ __forceinline__ bool contains(Grid3 g, int i, int j, int k) {
    return (unsigned)i < g.nz && (unsigned)j < g.ny && (unsigned)k < g.nx;
}

__device__ __forceinline__ bool is_interior(Grid3 g, int i, int j, int k) {
    return i >= 1 && j >= 1 && k >= 1 && (unsigned)i < g.nz - 1 && (unsigned)j < g.ny - 1 &&
           (unsigned)k < g.nx - 1;
}

__device__ __forceinline__ size_t index(Grid3 g, int i, int j, int k) {
    return ((size_t)i * g.ny + (size_t)j) * g.nx + (size_t)k;
}

template <typename T>
__device__ __forceinline__ T apply(const Coeffs<T>& c, T center, T x_minus, T x_plus, T y_minus,
                                   T y_plus, T z_minus, T z_plus) {
    // As the Rust `Coeffs::apply`: the centre's product, then one fused multiply-add per
    // neighbour, left to right (written out: the twins are compiled with --fmad=false).
    T sum = c.c[0] * center;
    sum = fma(c.c[1], x_minus, sum);
    sum = fma(c.c[2], x_plus, sum);
    sum = fma(c.c[3], y_minus, sum);
    sum = fma(c.c[4], y_plus, sum);
    sum = fma(c.c[5], z_minus, sum);
    sum = fma(c.c[6], z_plus, sum);
    return sum;
}

// Fig. 8.6: one thread per output point.
template <typename T>
__device__ __forceinline__ void stencil_basic(const T* in, T* out, Grid3 g, Coeffs<T> c) {
    int i = blockIdx.z * blockDim.z + threadIdx.z;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (!contains(g, i, j, k)) return;
    size_t idx = index(g, i, j, k);
    size_t row = g.nx, plane = (size_t)g.nx * g.ny;
    out[idx] = is_interior(g, i, j, k)
                   ? apply(c, in[idx], in[idx - 1], in[idx + 1], in[idx - row], in[idx + row],
                           in[idx - plane], in[idx + plane])
                   : in[idx];
}

// Fig. 8.8: IN_TILE_DIM^3 input tile in shared memory.
template <typename T, int IN_TILE_DIM>
__device__ __forceinline__ void stencil_shared_tiled(const T* in, T* out, Grid3 g, Coeffs<T> c) {
    constexpr int OUT_TILE_DIM = IN_TILE_DIM - 2;
    extern __shared__ unsigned char smem[];
    T(*in_s)[IN_TILE_DIM][IN_TILE_DIM] = reinterpret_cast<T(*)[IN_TILE_DIM][IN_TILE_DIM]>(smem);
    int tz = threadIdx.z, ty = threadIdx.y, tx = threadIdx.x;
    int i = blockIdx.z * OUT_TILE_DIM + tz - 1;
    int j = blockIdx.y * OUT_TILE_DIM + ty - 1;
    int k = blockIdx.x * OUT_TILE_DIM + tx - 1;
    if (contains(g, i, j, k)) in_s[tz][ty][tx] = in[index(g, i, j, k)];
    __syncthreads();
    if (contains(g, i, j, k) && tz >= 1 && tz < IN_TILE_DIM - 1 && ty >= 1 && ty < IN_TILE_DIM - 1 &&
        tx >= 1 && tx < IN_TILE_DIM - 1) {
        out[index(g, i, j, k)] =
            is_interior(g, i, j, k)
                ? apply(c, in_s[tz][ty][tx], in_s[tz][ty][tx - 1], in_s[tz][ty][tx + 1],
                        in_s[tz][ty - 1][tx], in_s[tz][ty + 1][tx], in_s[tz - 1][ty][tx],
                        in_s[tz + 1][ty][tx])
                : in_s[tz][ty][tx];
    }
}

// Fig. 8.10: coarsened along z, three planes in shared memory whose roles rotate.
template <typename T, int IN_TILE_DIM>
__device__ __forceinline__ void stencil_coarsened(const T* in, T* out, Grid3 g, Coeffs<T> c) {
    constexpr int OUT_TILE_DIM = IN_TILE_DIM - 2;
    extern __shared__ unsigned char smem[];
    typedef T Plane[IN_TILE_DIM][IN_TILE_DIM];
    Plane* planes = reinterpret_cast<Plane*>(smem);
    Plane* in_prev_s = &planes[0];
    Plane* in_curr_s = &planes[1];
    Plane* in_next_s = &planes[2];
    int ty = threadIdx.y, tx = threadIdx.x;
    int i_start = blockIdx.z * OUT_TILE_DIM;
    int j = blockIdx.y * OUT_TILE_DIM + ty - 1;
    int k = blockIdx.x * OUT_TILE_DIM + tx - 1;
    int i_end = min(i_start + OUT_TILE_DIM, (int)g.nz);
    bool computes_output = ty >= 1 && ty < IN_TILE_DIM - 1 && tx >= 1 && tx < IN_TILE_DIM - 1;
    if (contains(g, i_start - 1, j, k)) (*in_prev_s)[ty][tx] = in[index(g, i_start - 1, j, k)];
    if (contains(g, i_start, j, k)) (*in_curr_s)[ty][tx] = in[index(g, i_start, j, k)];
    for (int i = i_start; i < i_end; ++i) {
        if (contains(g, i + 1, j, k)) (*in_next_s)[ty][tx] = in[index(g, i + 1, j, k)];
        __syncthreads();
        if (computes_output && contains(g, i, j, k)) {
            out[index(g, i, j, k)] =
                is_interior(g, i, j, k)
                    ? apply(c, (*in_curr_s)[ty][tx], (*in_curr_s)[ty][tx - 1], (*in_curr_s)[ty][tx + 1],
                            (*in_curr_s)[ty - 1][tx], (*in_curr_s)[ty + 1][tx], (*in_prev_s)[ty][tx],
                            (*in_next_s)[ty][tx])
                    : (*in_curr_s)[ty][tx];
        }
        __syncthreads();
        Plane* old_prev = in_prev_s;
        in_prev_s = in_curr_s;
        in_curr_s = in_next_s;
        in_next_s = old_prev;
    }
}

// Fig. 8.12: coarsened along z, the current plane in shared memory, z neighbours in registers.
template <typename T, int IN_TILE_DIM>
__device__ __forceinline__ void stencil_register_tiled(const T* in, T* out, Grid3 g, Coeffs<T> c) {
    constexpr int OUT_TILE_DIM = IN_TILE_DIM - 2;
    extern __shared__ unsigned char smem[];
    T(*in_curr_s)[IN_TILE_DIM] = reinterpret_cast<T(*)[IN_TILE_DIM]>(smem);
    int ty = threadIdx.y, tx = threadIdx.x;
    int i_start = blockIdx.z * OUT_TILE_DIM;
    int j = blockIdx.y * OUT_TILE_DIM + ty - 1;
    int k = blockIdx.x * OUT_TILE_DIM + tx - 1;
    int i_end = min(i_start + OUT_TILE_DIM, (int)g.nz);
    bool computes_output = ty >= 1 && ty < IN_TILE_DIM - 1 && tx >= 1 && tx < IN_TILE_DIM - 1;
    T in_curr = contains(g, i_start, j, k) ? in[index(g, i_start, j, k)] : c.c[0];
    T in_prev = contains(g, i_start - 1, j, k) ? in[index(g, i_start - 1, j, k)] : in_curr;
    in_curr_s[ty][tx] = in_curr;
    for (int i = i_start; i < i_end; ++i) {
        T in_next = contains(g, i + 1, j, k) ? in[index(g, i + 1, j, k)] : in_curr;
        __syncthreads();
        if (computes_output && contains(g, i, j, k)) {
            out[index(g, i, j, k)] =
                is_interior(g, i, j, k)
                    ? apply(c, in_curr, in_curr_s[ty][tx - 1], in_curr_s[ty][tx + 1],
                            in_curr_s[ty - 1][tx], in_curr_s[ty + 1][tx], in_prev, in_next)
                    : in_curr;
        }
        __syncthreads();
        in_prev = in_curr;
        in_curr = in_next;
        in_curr_s[ty][tx] = in_next;
    }
}
