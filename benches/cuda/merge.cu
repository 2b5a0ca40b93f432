// CUDA C++ twins of the Rust merge kernels in gpu-kernels/src/merge/ (PMPP 12.3-12.8): the same
// algorithms line by line, the same block size, tile size, shared-memory layout and size, the same
// launch configuration. Templates over the key type `K` and the coarsening factor `E` (output keys
// per thread, per tile in the tiled kernels); a tile is one coarsened chunk per thread, as in
// `gpu_kernels::merge::tiles`: `BLOCK_THREADS * E` keys.
//
// Every constant comes from Rust: `merge_twin_source()` in benches/src/lib.rs writes them as
// `#define`s in front of this file (from `gpu_kernels::merge::tiles`), checks the grid
// arithmetic against Rust's with `static_assert`s, and appends one `extern "C"` entry point per
// Rust entry point, `cuda_<rust entry point>(a, m, b, n, c)` with 64-bit sizes.
//
// Indices are 64-bit (`size_t`, Rust's `usize` on the GPU); the per-thread splits are 32-bit, as
// in Rust. Comparisons are `>` (co-rank) and `<=` (merge), as in Rust, so the merge is stable
// (on equal keys A's comes first); inputs hold no NaN (the host refuses them).

#ifndef MERGE_TWIN_CONSTANTS
#error "merge.cu needs the constants that merge_twin_source() writes in front of it"
#endif

// ---------------------------------------------------------------------------------------------
// Arithmetic of usize as Rust writes it.

__host__ __device__ __forceinline__ constexpr size_t merge_min(size_t a, size_t b) {
    return a <= b ? a : b;  // Ord::min
}

__host__ __device__ __forceinline__ constexpr size_t merge_div_ceil(size_t a, size_t b) {
    return a / b + (a % b != 0 ? 1 : 0);  // usize::div_ceil
}

// ---------------------------------------------------------------------------------------------
// tiles.rs: the tile size and the grid of the tiled kernels.

// `tile_size`: output keys a block merges per tile, and the capacity of a_s, b_s and c_s.
__host__ __device__ __forceinline__ constexpr size_t merge_tile_size(size_t elements_per_thread) {
    return MERGE_BLOCK_THREADS * elements_per_thread;
}

// `tiled_blocks`: blocks for a merge of `total` keys (the host's launch; here for the checks).
template <size_t E>
__host__ __device__ constexpr size_t merge_tiled_blocks(size_t total) {
    constexpr size_t TILE_SIZE = merge_tile_size(E);
    size_t tiles = merge_div_ceil(total, TILE_SIZE);
    size_t tiles_per_block = merge_div_ceil(tiles, MERGE_MIN_TILED_BLOCKS);
    tiles_per_block = tiles_per_block < 1                       ? 1
                      : tiles_per_block > MERGE_TILES_PER_BLOCK ? MERGE_TILES_PER_BLOCK
                                                                : tiles_per_block;
    return merge_div_ceil(tiles, tiles_per_block);
}

// `tiled_block_outputs`: output keys per block, rounded up to whole tiles.
template <size_t E>
__host__ __device__ __forceinline__ constexpr size_t merge_tiled_block_outputs(size_t total,
                                                                               size_t blocks) {
    constexpr size_t TILE_SIZE = merge_tile_size(E);
    return merge_div_ceil(merge_div_ceil(total, blocks), TILE_SIZE) * TILE_SIZE;
}

// `tiled_block_range`: the book's `C_curr` and `C_next` of block `block` of `blocks`.
struct MergeRange {
    size_t curr, next;
};

template <size_t E>
__host__ __device__ __forceinline__ constexpr MergeRange merge_tiled_block_range(size_t total,
                                                                                 size_t blocks,
                                                                                 size_t block) {
    size_t per_block = merge_tiled_block_outputs<E>(total, blocks);
    size_t c_curr = merge_min(block * per_block, total);
    return MergeRange{c_curr, merge_min(c_curr + per_block, total)};
}

// `thread_range`: the outputs thread `tid` merges of a tile of `c_tile` keys.
template <size_t E>
__device__ __forceinline__ MergeRange merge_thread_range(size_t tid, size_t c_tile) {
    size_t c_curr = merge_min(tid * E, c_tile);
    return MergeRange{c_curr, merge_min(c_curr + E, c_tile)};
}

// ---------------------------------------------------------------------------------------------
// keys.rs and circular_buffer.rs: where keys live. Global and shared memory are plain pointers
// (`a[i]`, `a + count`); a circular buffer is `MergeCircular`, whose `[i]` is element
// `(start + i) mod capacity` of the buffer (one comparison instead of a modulo).

template <typename K>
struct MergeCircular {
    K* buffer;
    size_t start;
    size_t capacity;

    __device__ __forceinline__ size_t position(size_t i) const {
        size_t position = start + i;
        return position >= capacity ? position - capacity : position;
    }
    __device__ __forceinline__ K& operator[](size_t i) const { return buffer[position(i)]; }
    __device__ __forceinline__ MergeCircular skip(size_t count) const {
        return MergeCircular{buffer, position(count), capacity};
    }
};

// ---------------------------------------------------------------------------------------------
// sequential.rs

// PMPP Fig. 12.2, `merge_sequential_by`: stable, A's key first when two keys are equal.
template <typename A, typename B, typename C>
__device__ __forceinline__ void merge_sequential(A a, size_t m, B b, size_t n, C c) {
    size_t i = 0, j = 0, k = 0;
    while (i < m && j < n) {
        auto a_i = a[i];
        auto b_j = b[j];
        if (a_i <= b_j) {
            c[k] = a_i;
            i += 1;
        } else {
            c[k] = b_j;
            j += 1;
        }
        k += 1;
    }
    while (i < m) {
        c[k] = a[i];
        i += 1;
        k += 1;
    }
    while (j < n) {
        c[k] = b[j];
        j += 1;
        k += 1;
    }
}

// PMPP Fig. 12.5, `co_rank_by`, written as Rust writes it: a lower-bound search over `i` in
// `[max(0, k - n), min(k, m)]` for the first `i` with `A[i] > B[k - 1 - i]`.
template <typename A, typename B>
__device__ __forceinline__ size_t merge_co_rank(size_t k, A a, size_t m, B b, size_t n) {
    size_t i_low = k > n ? k - n : 0;  // saturating_sub
    size_t i_high = merge_min(k, m);
    while (i_low < i_high) {
        size_t i = i_low + (i_high - i_low) / 2;
        size_t j = k - 1 - i;
        if (a[i] > b[j]) {
            i_high = i;
        } else {
            i_low = i + 1;
        }
    }
    return i_low;
}

// ---------------------------------------------------------------------------------------------
// basic.rs: PMPP 12.5 (Fig. 12.9), every thread co-ranks its coarsened chunk in global memory.

template <typename K, size_t E>
__device__ __forceinline__ void merge_basic_thread(size_t tid, const K* a, size_t m, const K* b,
                                                   size_t n, K* c) {
    size_t total = m + n;
    size_t k_curr = merge_min(tid * E, total);
    size_t k_next = merge_min(k_curr + E, total);
    if (k_curr == k_next) return;
    size_t i_curr = merge_co_rank(k_curr, a, m, b, n);
    size_t i_next = merge_co_rank(k_next, a, m, b, n);
    size_t j_curr = k_curr - i_curr;
    size_t j_next = k_next - i_next;
    merge_sequential(a + i_curr, i_next - i_curr, b + j_curr, j_next - j_curr, c + k_curr);
}

template <typename K, size_t E>
__device__ __forceinline__ void merge_basic(const K* a, size_t m, const K* b, size_t n, K* c) {
    size_t tid = (size_t)blockIdx.x * (size_t)blockDim.x + (size_t)threadIdx.x;
    merge_basic_thread<K, E>(tid, a, m, b, n, c);
}

// ---------------------------------------------------------------------------------------------
// tiled.rs: PMPP 12.6 (Figs. 12.11-12.13).

// The launch-sized shared memory: the header (the block's two co-ranks in global memory as u64,
// then the BLOCK_THREADS + 1 u32 splits at word SPLITS_OFFSET), then a_s, b_s and c_s of
// TILE_SIZE keys each, from key HEADER_BYTES / sizeof(K) (`a_s_offset`).
extern __shared__ __align__(16) unsigned char merge_smem[];

template <typename K>
struct MergeTileBuffers {
    K* a_s;
    K* b_s;
    K* c_s;
    unsigned int* splits;

    template <size_t E>
    __device__ __forceinline__ static MergeTileBuffers in_shared_memory() {
        constexpr size_t TILE_SIZE = merge_tile_size(E);
        static_assert(MERGE_HEADER_BYTES % sizeof(K) == 0, "a_s_offset: keys are aligned");
        K* a_s = reinterpret_cast<K*>(merge_smem) + MERGE_HEADER_BYTES / sizeof(K);
        return MergeTileBuffers{a_s, a_s + TILE_SIZE, a_s + 2 * TILE_SIZE,
                                reinterpret_cast<unsigned int*>(merge_smem) + MERGE_SPLITS_OFFSET};
    }
};

__device__ __forceinline__ unsigned long long* merge_co_ranks() {
    return reinterpret_cast<unsigned long long*>(merge_smem);
}

// `TiledBlock`: what a block has merged of its range; every thread holds the same copy.
template <size_t E>
struct MergeTiledBlock {
    enum : size_t { TILE_SIZE = merge_tile_size(E) };  // an enum: no variable in the PTX

    size_t a_curr, b_curr, c_curr;
    size_t a_length, b_length, c_length;
    size_t a_consumed, b_consumed, c_completed;
    size_t c_staged;

    __device__ __forceinline__ MergeTiledBlock(size_t c_curr_, size_t c_next, size_t a_curr_,
                                               size_t a_next) {
        size_t b_curr_ = c_curr_ - a_curr_;
        size_t b_next = c_next - a_next;
        a_curr = a_curr_;
        b_curr = b_curr_;
        c_curr = c_curr_;
        a_length = a_next - a_curr_;
        b_length = b_next - b_curr_;
        c_length = c_next - c_curr_;
        a_consumed = 0;
        b_consumed = 0;
        c_completed = 0;
        c_staged = 0;
    }

    __device__ __forceinline__ size_t total_iterations() const {
        return merge_div_ceil(c_length, TILE_SIZE);
    }
    __device__ __forceinline__ size_t a_tile() const {
        return merge_min(TILE_SIZE, a_length - a_consumed);
    }
    __device__ __forceinline__ size_t b_tile() const {
        return merge_min(TILE_SIZE, b_length - b_consumed);
    }
    __device__ __forceinline__ size_t c_tile() const {
        return merge_min(TILE_SIZE, c_length - c_completed);
    }

    // Phase 1: store the last tile's outputs from c_s, load this tile's keys, coalesced.
    template <typename K>
    __device__ __forceinline__ void load_tiles(size_t tid, const K* a, const K* b, K* c,
                                               MergeTileBuffers<K> s) {
        size_t a_tile_ = a_tile(), b_tile_ = b_tile();
        store_tile(tid, c, s);
        const K* a_next = a + (a_curr + a_consumed);
        const K* b_next = b + (b_curr + b_consumed);
        for (size_t i = tid; i < a_tile_; i += MERGE_BLOCK_THREADS) s.a_s[i] = a_next[i];
        for (size_t i = tid; i < b_tile_; i += MERGE_BLOCK_THREADS) s.b_s[i] = b_next[i];
    }

    // Phase 2: co-rank the start of this thread's chunk of the tile into splits[tid]; the last
    // thread also the end of the tile into splits[BLOCK_THREADS].
    template <typename K>
    __device__ __forceinline__ void split_tile(size_t tid, MergeTileBuffers<K> s) const {
        size_t a_tile_ = a_tile(), b_tile_ = b_tile();
        size_t c_tile_ = c_tile();
        size_t c_curr_ = merge_thread_range<E>(tid, c_tile_).curr;
        s.splits[tid] = (unsigned int)merge_co_rank(c_curr_, s.a_s, a_tile_, s.b_s, b_tile_);
        if (tid == MERGE_BLOCK_THREADS - 1) {
            s.splits[MERGE_BLOCK_THREADS] =
                (unsigned int)merge_co_rank(c_tile_, s.a_s, a_tile_, s.b_s, b_tile_);
        }
    }

    // Phase 3: merge this thread's chunk into c_s; move past the tile.
    template <typename K>
    __device__ __forceinline__ void merge_tile(size_t tid, MergeTileBuffers<K> s) {
        size_t c_tile_ = c_tile();
        MergeRange r = merge_thread_range<E>(tid, c_tile_);
        size_t a_curr_ = s.splits[tid];
        size_t a_next = s.splits[tid + 1];
        size_t b_curr_ = r.curr - a_curr_;
        size_t b_next = r.next - a_next;
        merge_sequential(s.a_s + a_curr_, a_next - a_curr_, s.b_s + b_curr_, b_next - b_curr_,
                         s.c_s + r.curr);
        a_consumed += s.splits[MERGE_BLOCK_THREADS];
        c_completed += c_tile_;
        b_consumed = c_completed - a_consumed;
        c_staged = c_tile_;
    }

    // This thread's share of storing the staged outputs from c_s, coalesced.
    template <typename K>
    __device__ __forceinline__ void store_tile(size_t tid, K* c, MergeTileBuffers<K> s) {
        K* c_out = c + (c_curr + c_completed - c_staged);
        for (size_t i = tid; i < c_staged; i += MERGE_BLOCK_THREADS) c_out[i] = s.c_s[i];
        c_staged = 0;
    }
};

template <typename K, size_t E>
__device__ __forceinline__ void merge_tiled(const K* a, size_t m, const K* b, size_t n, K* c) {
    size_t tid = threadIdx.x;
    MergeRange range = merge_tiled_block_range<E>(m + n, gridDim.x, blockIdx.x);
    unsigned long long* co_ranks = merge_co_ranks();
    MergeTileBuffers<K> buffers = MergeTileBuffers<K>::template in_shared_memory<E>();
    // One thread co-ranks the block's range in global memory; all read it after the barrier.
    if (tid == 0) {
        co_ranks[0] = merge_co_rank(range.curr, a, m, b, n);
        co_ranks[1] = merge_co_rank(range.next, a, m, b, n);
    }
    __syncthreads();
    MergeTiledBlock<E> block(range.curr, range.next, co_ranks[0], co_ranks[1]);
    size_t iterations = block.total_iterations();
    for (size_t iteration = 0; iteration < iterations; ++iteration) {
        block.load_tiles(tid, a, b, c, buffers);
        __syncthreads();
        block.split_tile(tid, buffers);
        __syncthreads();
        block.merge_tile(tid, buffers);
        __syncthreads();
    }
    block.store_tile(tid, c, buffers);
}

// ---------------------------------------------------------------------------------------------
// circular.rs: PMPP 12.7 (Figs. 12.17-12.20), a_s and b_s as circular buffers.

// `position mod TILE_SIZE` for `position < 2 * TILE_SIZE`.
template <size_t E>
__device__ __forceinline__ size_t merge_wrap(size_t position) {
    constexpr size_t TILE_SIZE = merge_tile_size(E);
    return position >= TILE_SIZE ? position - TILE_SIZE : position;
}

// PMPP Fig. 12.19, `co_rank_circular`.
template <typename K>
__device__ __forceinline__ size_t merge_co_rank_circular(size_t k, K* a_s, size_t m, K* b_s,
                                                         size_t n, size_t a_s_start,
                                                         size_t b_s_start, size_t tile_size) {
    MergeCircular<K> a{a_s, a_s_start, tile_size};
    MergeCircular<K> b{b_s, b_s_start, tile_size};
    return merge_co_rank(k, a, m, b, n);
}

// PMPP Fig. 12.20, `merge_sequential_circular`.
template <typename K>
__device__ __forceinline__ void merge_sequential_circular(K* a_s, size_t m, K* b_s, size_t n, K* c,
                                                          size_t a_s_start, size_t b_s_start,
                                                          size_t tile_size) {
    MergeCircular<K> a{a_s, a_s_start, tile_size};
    MergeCircular<K> b{b_s, b_s_start, tile_size};
    merge_sequential(a, m, b, n, c);
}

// `CircularBlock`: what a block has merged and what its buffers hold; the same in every thread.
template <size_t E>
struct MergeCircularBlock {
    enum : size_t { TILE_SIZE = merge_tile_size(E) };  // an enum: no variable in the PTX

    size_t a_curr, b_curr, c_curr;
    size_t a_length, b_length, c_length;
    size_t a_consumed, b_consumed, c_completed;
    size_t a_s_start, b_s_start;
    size_t a_s_len, b_s_len;
    size_t c_staged;

    __device__ __forceinline__ MergeCircularBlock(size_t c_curr_, size_t c_next, size_t a_curr_,
                                                  size_t a_next) {
        size_t b_curr_ = c_curr_ - a_curr_;
        size_t b_next = c_next - a_next;
        a_curr = a_curr_;
        b_curr = b_curr_;
        c_curr = c_curr_;
        a_length = a_next - a_curr_;
        b_length = b_next - b_curr_;
        c_length = c_next - c_curr_;
        a_consumed = 0;
        b_consumed = 0;
        c_completed = 0;
        a_s_start = 0;
        b_s_start = 0;
        a_s_len = 0;
        b_s_len = 0;
        c_staged = 0;
    }

    __device__ __forceinline__ size_t total_iterations() const {
        return merge_div_ceil(c_length, TILE_SIZE);
    }
    __device__ __forceinline__ size_t c_tile() const {
        return merge_min(TILE_SIZE, c_length - c_completed);
    }

    // Phase 1: store the last tile's outputs from c_s; refill each buffer behind its unconsumed
    // keys with as many keys as there is room for, none past the block's runs. Coalesced.
    template <typename K>
    __device__ __forceinline__ void load_tiles(size_t tid, const K* a, const K* b, K* c,
                                               MergeTileBuffers<K> s) {
        size_t a_loaded = a_consumed + a_s_len;
        size_t b_loaded = b_consumed + b_s_len;
        size_t a_new = merge_min(TILE_SIZE - a_s_len, a_length - a_loaded);
        size_t b_new = merge_min(TILE_SIZE - b_s_len, b_length - b_loaded);
        store_tile(tid, c, s);
        const K* a_src = a + (a_curr + a_loaded);
        const K* b_src = b + (b_curr + b_loaded);
        MergeCircular<K> a_dst = MergeCircular<K>{s.a_s, a_s_start, TILE_SIZE}.skip(a_s_len);
        MergeCircular<K> b_dst = MergeCircular<K>{s.b_s, b_s_start, TILE_SIZE}.skip(b_s_len);
        for (size_t i = tid; i < a_new; i += MERGE_BLOCK_THREADS) a_dst[i] = a_src[i];
        for (size_t i = tid; i < b_new; i += MERGE_BLOCK_THREADS) b_dst[i] = b_src[i];
        a_s_len += a_new;
        b_s_len += b_new;
    }

    // Phase 2: co-rank the start of this thread's chunk in the circular buffers into
    // splits[tid]; the last thread also the end of the tile into splits[BLOCK_THREADS].
    template <typename K>
    __device__ __forceinline__ void split_tile(size_t tid, MergeTileBuffers<K> s) const {
        size_t m = a_s_len, n = b_s_len;
        size_t a_s_start_ = a_s_start, b_s_start_ = b_s_start;
        size_t c_tile_ = c_tile();
        size_t c_curr_ = merge_thread_range<E>(tid, c_tile_).curr;
        size_t a_curr_ =
            merge_co_rank_circular(c_curr_, s.a_s, m, s.b_s, n, a_s_start_, b_s_start_, TILE_SIZE);
        s.splits[tid] = (unsigned int)a_curr_;
        if (tid == MERGE_BLOCK_THREADS - 1) {
            size_t a_tile = merge_co_rank_circular(c_tile_, s.a_s, m, s.b_s, n, a_s_start_,
                                                   b_s_start_, TILE_SIZE);
            s.splits[MERGE_BLOCK_THREADS] = (unsigned int)a_tile;
        }
    }

    // Phase 3: merge this thread's chunk into c_s; drop the tile's keys from both buffers.
    template <typename K>
    __device__ __forceinline__ void merge_tile(size_t tid, MergeTileBuffers<K> s) {
        size_t c_tile_ = c_tile();
        MergeRange r = merge_thread_range<E>(tid, c_tile_);
        size_t a_curr_ = s.splits[tid];
        size_t a_next = s.splits[tid + 1];
        size_t b_curr_ = r.curr - a_curr_;
        size_t b_next = r.next - a_next;
        size_t a_s_curr = merge_wrap<E>(a_s_start + a_curr_);
        size_t b_s_curr = merge_wrap<E>(b_s_start + b_curr_);
        K* c_out = s.c_s + r.curr;
        merge_sequential_circular(s.a_s, a_next - a_curr_, s.b_s, b_next - b_curr_, c_out, a_s_curr,
                                  b_s_curr, TILE_SIZE);
        size_t a_s_consumed = s.splits[MERGE_BLOCK_THREADS];
        size_t b_s_consumed = c_tile_ - a_s_consumed;
        a_s_start = merge_wrap<E>(a_s_start + a_s_consumed);
        b_s_start = merge_wrap<E>(b_s_start + b_s_consumed);
        a_s_len -= a_s_consumed;
        b_s_len -= b_s_consumed;
        a_consumed += a_s_consumed;
        b_consumed += b_s_consumed;
        c_completed += c_tile_;
        c_staged = c_tile_;
    }

    // This thread's share of storing the staged outputs from c_s, coalesced.
    template <typename K>
    __device__ __forceinline__ void store_tile(size_t tid, K* c, MergeTileBuffers<K> s) {
        K* c_out = c + (c_curr + c_completed - c_staged);
        for (size_t i = tid; i < c_staged; i += MERGE_BLOCK_THREADS) c_out[i] = s.c_s[i];
        c_staged = 0;
    }
};

template <typename K, size_t E>
__device__ __forceinline__ void merge_circular(const K* a, size_t m, const K* b, size_t n, K* c) {
    size_t tid = threadIdx.x;
    MergeRange range = merge_tiled_block_range<E>(m + n, gridDim.x, blockIdx.x);
    unsigned long long* co_ranks = merge_co_ranks();
    MergeTileBuffers<K> buffers = MergeTileBuffers<K>::template in_shared_memory<E>();
    // One thread co-ranks the block's range in global memory; all read it after the barrier.
    if (tid == 0) {
        co_ranks[0] = merge_co_rank(range.curr, a, m, b, n);
        co_ranks[1] = merge_co_rank(range.next, a, m, b, n);
    }
    __syncthreads();
    MergeCircularBlock<E> block(range.curr, range.next, co_ranks[0], co_ranks[1]);
    size_t iterations = block.total_iterations();
    for (size_t iteration = 0; iteration < iterations; ++iteration) {
        block.load_tiles(tid, a, b, c, buffers);
        __syncthreads();
        block.split_tile(tid, buffers);
        __syncthreads();
        block.merge_tile(tid, buffers);
        __syncthreads();
    }
    block.store_tile(tid, c, buffers);
}
