// Runs the CUDA C++ merge twins (the generated source of `merge_twin_source()`) on the CPU,
// without a GPU: one std::thread per CUDA thread, std::barrier for __syncthreads, the blocks of
// the grid one after another, shared memory poisoned before each block, outputs poisoned
// before each launch. Checks the three kernels against a stable merge, bit for bit (so -0.0 and
// +0.0 show whether A's key comes first on ties), on every key type at the default coarsening
// and on several factors of the sweep, with the host's grid and with two blocks (many tiles
// per block, wrapping circular buffers). Prints `N passed, M failed`; exits non-zero on a
// failure. See README.md:
//
//   g++ -std=c++20 -O2 -pthread -DTWIN_SOURCE='"/path/to/merge_twins.cu"' emulate_merge_twins.cpp
#include <barrier>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>
#include <vector>
#include <algorithm>
#define __global__
#define __device__
#define __host__
#define __shared__
#define __forceinline__ inline
#define __align__(n) __attribute__((aligned(n)))
struct Dim3 { unsigned x = 0, y = 0, z = 0; };
thread_local Dim3 threadIdx, blockIdx;
Dim3 blockDim, gridDim;
static std::barrier<>* block_barrier;
void __syncthreads() { block_barrier->arrive_and_wait(); }
#include TWIN_SOURCE
alignas(16) unsigned char merge_smem[1 << 18];

template <typename K, typename F>
void launch(size_t blocks, size_t shared, F kernel) {
    gridDim.x = (unsigned)blocks;
    blockDim.x = MERGE_BLOCK_THREADS;
    for (size_t block = 0; block < blocks; ++block) {
        memset(merge_smem, 0xA5, shared);
        std::barrier<> barrier((ptrdiff_t)MERGE_BLOCK_THREADS);
        block_barrier = &barrier;
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < MERGE_BLOCK_THREADS; ++t)
            threads.emplace_back([&, t] { threadIdx.x = t; blockIdx.x = (unsigned)block; kernel(); });
        for (auto& th : threads) th.join();
    }
}

template <typename K>
std::vector<K> stable_merge(const std::vector<K>& a, const std::vector<K>& b) {
    std::vector<K> c;
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) c.push_back(b[j] < a[i] ? b[j++] : a[i++]);
    while (i < a.size()) c.push_back(a[i++]);
    while (j < b.size()) c.push_back(b[j++]);
    return c;
}

static int failures = 0, runs = 0;

template <typename K, size_t E>
void check(const char* what, const std::vector<K>& a, const std::vector<K>& b, size_t grid_override) {
    size_t m = a.size(), n = b.size(), total = m + n;
    std::vector<K> expected = stable_merge(a, b);
    constexpr size_t TILE = MERGE_BLOCK_THREADS * E;
    size_t shared = MERGE_HEADER_BYTES + 3 * TILE * sizeof(K);
    for (int variant = 0; variant < 3; ++variant) {
        std::vector<K> c(total);
        memset(c.data(), 0xFF, total * sizeof(K));
        size_t blocks;
        if (variant == 0) blocks = merge_div_ceil(merge_div_ceil(total, E), MERGE_BLOCK_THREADS);
        else blocks = grid_override ? grid_override : merge_tiled_blocks<E>(total);
        if (total == 0) blocks = 0;
        const K* ap = a.data(); const K* bp = b.data(); K* cp = c.data();
        if (variant == 0) launch<K>(blocks, 0, [&] { merge_basic<K, E>(ap, m, bp, n, cp); });
        if (variant == 1) launch<K>(blocks, shared, [&] { merge_tiled<K, E>(ap, m, bp, n, cp); });
        if (variant == 2) launch<K>(blocks, shared, [&] { merge_circular<K, E>(ap, m, bp, n, cp); });
        ++runs;
        if (total && memcmp(c.data(), expected.data(), total * sizeof(K)) != 0) {
            size_t k = 0;
            while (memcmp(&c[k], &expected[k], sizeof(K)) == 0) ++k;
            printf("FAIL %s variant %d E=%zu m=%zu n=%zu blocks=%zu: first difference at %zu\n", what, variant, E, m, n, blocks, k);
            ++failures;
        }
    }
}

template <typename K>
std::vector<K> sorted(size_t len, int levels, std::mt19937_64& rng, bool signed_zero) {
    std::vector<K> v(len);
    std::uniform_int_distribution<int> d(0, levels - 1);
    for (auto& x : v) x = (K)(d(rng) - levels / 2);
    std::sort(v.begin(), v.end());
    if (signed_zero) for (auto& x : v) if (x == 0) x = (rng() & 1) ? (K)-0.0 : (K)0.0;
    return v;
}

template <typename K, size_t E>
void suite(const char* name, bool floats) {
    std::mt19937_64 rng(E * 1000 + sizeof(K));
    constexpr size_t TILE = MERGE_BLOCK_THREADS * E;
    size_t sizes[][2] = {{0, 0}, {0, 5}, {7, 0}, {1, 1}, {TILE - 1, 1}, {TILE, TILE}, {3 * TILE + 17, 2 * TILE - 5},
                         {5 * TILE, 3}, {2, 6 * TILE + 1}};
    for (auto& s : sizes) {
        for (int levels : {3, 1000000}) {
            auto a = sorted<K>(s[0], levels, rng, floats);
            auto b = sorted<K>(s[1], levels, rng, floats);
            check<K, E>(name, a, b, 0);
            check<K, E>(name, a, b, 2);  // several tiles per block
        }
    }
}

int main() {
    suite<int, MERGE_ELEMENTS_PER_THREAD>("int", false);
    suite<unsigned int, MERGE_ELEMENTS_PER_THREAD>("unsigned", false);
    suite<long long, MERGE_ELEMENTS_PER_THREAD>("long long", false);
    suite<float, MERGE_ELEMENTS_PER_THREAD>("float", true);
    suite<double, MERGE_ELEMENTS_PER_THREAD>("double", true);
    suite<int, 1>("int", false);
    suite<double, 2>("double", true);
    suite<int, 4>("int", false);
    suite<double, 16>("double", true);
    printf("%d passed, %d failed\n", runs - failures, failures);
    return failures != 0;
}
