// merge_peers: the merges a CUDA C++ user would pick instead of ours, timed on the GPU.
//
// Reads sorted A (m keys) and B (n keys) from NumPy .npy files (1-D, little-endian int32,
// uint32, int64, float32 or float64, the same dtype in both), and times, each with CUDA events
// (median of --repeat runs after --warm-up runs):
//
//   thrust::merge                 thrust::merge(thrust::cuda::par_nosync(cache).on(stream), ...)
//                                 on device vectors: stable (on ties A's keys come first), no
//                                 synchronisation, temporary storage from a cache, so that no
//                                 cudaMalloc/cudaFree and no host wake-up falls between the events
//   cub::DeviceMerge              cub::DeviceMerge::MergeKeys with its temporary storage allocated
//                                 once (CCCL 2.7 and later; with an older CCCL the row says why it
//                                 is missing)
//   copy (the ceiling)            cudaMemcpyAsync device-to-device of A into C[0, m) and B into
//                                 C[m, m + n): the bytes a merge must read and write
//
// With --values u32|u64 it merges by key instead: every key of A carries the value of its index,
// every key of B its index with the top bit set (as our `merge --values` generates them), and it
// times thrust::merge_by_key and cub::DeviceMerge::MergePairs, and a copy of the keys and the
// values; --values-out / --cub-values-out save the merged values as .npy.
//
// With --set OP (union, intersection, difference or symmetric-difference) it times a set operation
// on the sorted keys instead, with the multiset semantics of std::set_* (a key found m times in A
// and n times in B is kept max(m, n), min(m, n), max(m - n, 0) or |m - n| times): the same copy (the
// bytes of A and B, read and written once), and thrust::set_union, thrust::set_intersection,
// thrust::set_difference or thrust::set_symmetric_difference, called as thrust::merge is, into an
// output of m + n keys (CUB has no set operations). Thrust learns how many keys it wrote by
// synchronising the stream and reading the count back before it returns, so that wait is timed
// too, as our `merge --set` reads its count back. The row says how many keys it wrote
// ("outputs"), and --out saves those keys alone.
//
// The events are recorded around the host call, as our `merge` binary and criterion benchmarks
// time our kernels, so launch latency counts for both. With --busy-wait a one-thread kernel
// spins on the stream (about a millisecond) before each timed call, so that the call is enqueued
// while the GPU is busy and the events measure GPU time alone. After timing, the output is
// poisoned (every byte 0xFF), the peer runs once more, and its result is written to --out /
// --cub-out as .npy, for benches/peers/merge_peers.py to check against a stable merge.
//
// Build (CUDA 12.8+ or 13, thrust and CUB from the toolkit; nothing else):
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o merge_peers benches/peers/merge_peers.cu
//
// Usage:
//
//   merge_peers --a A.npy --b B.npy [--out C.npy] [--cub-out D.npy] [--repeat 50] [--warm-up 3]
//               [--device 0] [--busy-wait] [--values u32|u64 [--values-out V.npy] [--cub-values-out W.npy]]
//   merge_peers --a A.npy --b B.npy --set union|intersection|difference|symmetric-difference [--out C.npy]
//               [--repeat 50] [--warm-up 3] [--device 0] [--busy-wait]
//   merge_peers --info [--device 0]
//
// Prints one JSON object on stdout per invocation: the GPU, the toolkit and CCCL versions, and
// (without --info) m, n, dtype, values, set (the operation, or null), copy_ms and one row per
// peer: {"peer", "ms", "output", "outputs", "error"} ("outputs" is the count of keys a set
// operation wrote, null for a merge; "error" is null, or why the peer has no time). Exit status:
// 0 done (a peer that failed says so in its row), 2 bad arguments or input files, 3 no CUDA GPU.

#include <cuda_runtime.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/merge.h>
#include <thrust/set_operations.h>
#include <thrust/system/cuda/execution_policy.h>
#include <thrust/version.h>

#include <cub/version.cuh>
#include <cuda/std/functional>

// cub::DeviceMerge first appears in CCCL 2.7 (CUDA 12.8). CUB_VERSION is major * 100000 +
// minor * 100 + patch.
#if defined(CUB_VERSION) && CUB_VERSION >= 200700
#  include <cub/device/device_merge.cuh>
#  define MERGE_PEERS_HAVE_CUB_MERGE 1
#else
#  define MERGE_PEERS_HAVE_CUB_MERGE 0
#endif

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <new>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

// ---------------------------------------------------------------------------------------------
// Errors

// A bad argument or input file: reported as one line, exit status 2.
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A failed CUDA call inside a peer: the peer's row says so, the others go on.
struct CudaError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

void check(cudaError_t status, const char* what) {
    if (status != cudaSuccess) {
        throw CudaError(std::string(what) + ": " + cudaGetErrorName(status) + " (" +
                        cudaGetErrorString(status) + ")");
    }
}

// ---------------------------------------------------------------------------------------------
// JSON

std::string json_string(const std::string& text) {
    std::string out = "\"";
    for (unsigned char ch : text) {
        switch (ch) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                if (ch < 0x20) {
                    char escaped[8];
                    std::snprintf(escaped, sizeof escaped, "\\u%04x", ch);
                    out += escaped;
                } else {
                    out += static_cast<char>(ch);
                }
        }
    }
    return out + "\"";
}

std::string json_number(std::optional<double> value) {
    if (!value) return "null";
    char text[32];
    std::snprintf(text, sizeof text, "%.9g", *value);
    return text;
}

std::string json_optional_string(const std::optional<std::string>& text) {
    return text ? json_string(*text) : "null";
}

// "3.5.0" from a version number written major * scale_major + minor * scale_minor + patch.
std::string dotted(long version, long scale_major, long scale_minor) {
    return std::to_string(version / scale_major) + "." + std::to_string(version % scale_major / scale_minor) +
           "." + std::to_string(version % scale_minor);
}

// ---------------------------------------------------------------------------------------------
// .npy files (format version 1.0 to 3.0: magic, version, header length, a Python dict literal)

enum class Dtype { I32, U32, I64, U64, F32, F64 };

struct DtypeInfo {
    Dtype dtype;
    const char* descr;  // the .npy type descriptor
    const char* name;   // ours (i32, ...)
    const char* numpy;  // NumPy's (int32, ...)
    size_t bytes;
};

constexpr DtypeInfo kDtypes[] = {
    {Dtype::I32, "<i4", "i32", "int32", 4},   {Dtype::U32, "<u4", "u32", "uint32", 4},
    {Dtype::I64, "<i8", "i64", "int64", 8},   {Dtype::U64, "<u8", "u64", "uint64", 8},
    {Dtype::F32, "<f4", "f32", "float32", 4},
    {Dtype::F64, "<f8", "f64", "float64", 8},
};

const DtypeInfo& info(Dtype dtype) {
    for (const auto& d : kDtypes)
        if (d.dtype == dtype) return d;
    throw std::logic_error("unknown dtype");
}

const char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

// A 1-D .npy file whose header has been read and checked; `data_offset` is where the keys start.
struct NpyFile {
    std::string path;
    Dtype dtype;
    size_t len;
    std::streamoff data_offset;
};

// The value after `'key':` in the header dict, up to the next top-level comma or closing brace.
std::string header_field(const std::string& header, const std::string& key, const std::string& path) {
    const std::string quoted = "'" + key + "'";
    size_t at = header.find(quoted);
    if (at == std::string::npos)
        throw UsageError(path + ": not a NumPy .npy file (its header has no " + quoted + ")");
    at = header.find(':', at + quoted.size());
    if (at == std::string::npos) throw UsageError(path + ": not a NumPy .npy file (malformed header)");
    size_t start = header.find_first_not_of(' ', at + 1);
    if (start == std::string::npos) throw UsageError(path + ": not a NumPy .npy file (malformed header)");
    size_t end;
    if (header[start] == '(') {
        end = header.find(')', start);
        if (end == std::string::npos) throw UsageError(path + ": not a NumPy .npy file (malformed shape)");
        ++end;
    } else if (header[start] == '\'') {
        end = header.find('\'', start + 1);
        if (end == std::string::npos) throw UsageError(path + ": not a NumPy .npy file (malformed header)");
        ++end;
    } else {
        end = header.find_first_of(",}", start);
        if (end == std::string::npos) end = header.size();
    }
    return header.substr(start, end - start);
}

NpyFile read_npy_header(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) throw UsageError(path + ": cannot open it: " + std::strerror(errno));
    char magic[kMagicLen + 2];
    if (!file.read(magic, sizeof magic) || std::memcmp(magic, kMagic, kMagicLen) != 0)
        throw UsageError(path + ": not a NumPy .npy file (no \\x93NUMPY magic)");
    const int major = static_cast<unsigned char>(magic[kMagicLen]);
    size_t header_len = 0;
    std::streamoff prefix = 0;
    if (major == 1) {
        unsigned char len[2];
        if (!file.read(reinterpret_cast<char*>(len), 2)) throw UsageError(path + ": truncated .npy header");
        header_len = len[0] | (size_t(len[1]) << 8);
        prefix = kMagicLen + 2 + 2;
    } else if (major == 2 || major == 3) {
        unsigned char len[4];
        if (!file.read(reinterpret_cast<char*>(len), 4)) throw UsageError(path + ": truncated .npy header");
        header_len = len[0] | (size_t(len[1]) << 8) | (size_t(len[2]) << 16) | (size_t(len[3]) << 24);
        prefix = kMagicLen + 2 + 4;
    } else {
        throw UsageError(path + ": .npy format version " + std::to_string(major) + " is not supported");
    }
    std::string header(header_len, '\0');
    if (!file.read(header.data(), static_cast<std::streamsize>(header_len)))
        throw UsageError(path + ": truncated .npy header");

    const std::string descr_field = header_field(header, "descr", path);
    const std::string descr = descr_field.size() >= 2 && descr_field.front() == '\''
                                  ? descr_field.substr(1, descr_field.size() - 2)
                                  : descr_field;
    const DtypeInfo* found = nullptr;
    for (const auto& d : kDtypes)
        if (descr == d.descr) found = &d;
    if (!found) {
        throw UsageError(path + ": its dtype is '" + descr +
                         "', expected int32 ('<i4'), uint32 ('<u4'), int64 ('<i8'), float32 ('<f4') or "
                         "float64 ('<f8'), little-endian");
    }
    // A 1-D array has the same layout in C and Fortran order, so fortran_order does not matter.
    const std::string shape = header_field(header, "shape", path);  // "(N,)" for 1-D
    std::vector<unsigned long long> extents;
    {
        std::string inner = shape.substr(1, shape.size() - 2);
        std::stringstream parts(inner);
        std::string part;
        while (std::getline(parts, part, ',')) {
            part.erase(std::remove(part.begin(), part.end(), ' '), part.end());
            if (part.empty()) continue;
            char* end = nullptr;
            errno = 0;
            unsigned long long extent = std::strtoull(part.c_str(), &end, 10);
            if (errno != 0 || *end != '\0') throw UsageError(path + ": malformed shape " + shape);
            extents.push_back(extent);
        }
    }
    if (extents.size() != 1) {
        throw UsageError(path + ": its shape " + shape + " has " + std::to_string(extents.size()) +
                         " dimensions, expected 1: merge inputs are 1-D arrays");
    }
    const std::streamoff data_offset = prefix + static_cast<std::streamoff>(header_len);
    file.seekg(0, std::ios::end);
    const unsigned long long data_bytes = static_cast<unsigned long long>(file.tellg() - data_offset);
    const unsigned long long needed = extents[0] * found->bytes;
    if (extents[0] > (1ull << 40) || data_bytes != needed) {
        throw UsageError(path + ": it holds " + std::to_string(data_bytes) + " bytes of data, but " +
                         std::to_string(extents[0]) + " " + found->numpy + " keys need " +
                         std::to_string(needed));
    }
    return NpyFile{path, found->dtype, static_cast<size_t>(extents[0]), data_offset};
}

template <typename T>
std::vector<T> read_npy_data(const NpyFile& npy) {
    std::vector<T> keys(npy.len);
    std::ifstream file(npy.path, std::ios::binary);
    file.seekg(npy.data_offset);
    if (!file.read(reinterpret_cast<char*>(keys.data()), static_cast<std::streamsize>(npy.len * sizeof(T))))
        throw UsageError(npy.path + ": cannot read its data");
    return keys;  // little-endian on disk, and on every host CUDA runs on
}

// Writes `keys` as a 1-D .npy file, format 1.0, header padded to a multiple of 64 bytes.
template <typename T>
void write_npy(const std::string& path, Dtype dtype, const std::vector<T>& keys) {
    std::string header = std::string("{'descr': '") + info(dtype).descr +
                         "', 'fortran_order': False, 'shape': (" + std::to_string(keys.size()) + ",), }";
    const size_t prefix = kMagicLen + 2 + 2;
    const size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
    header.append(total - prefix - header.size() - 1, ' ');
    header += '\n';
    std::ofstream file(path, std::ios::binary);
    const unsigned char version_and_len[4] = {1, 0, static_cast<unsigned char>(header.size() & 0xFF),
                                              static_cast<unsigned char>(header.size() >> 8)};
    file.write(kMagic, kMagicLen);
    file.write(reinterpret_cast<const char*>(version_and_len), 4);
    file.write(header.data(), static_cast<std::streamsize>(header.size()));
    file.write(reinterpret_cast<const char*>(keys.data()),
               static_cast<std::streamsize>(keys.size() * sizeof(T)));
    if (!file.flush()) throw std::runtime_error("writing " + path + " failed: " + std::strerror(errno));
}

// ---------------------------------------------------------------------------------------------
// Timing

constexpr long long kBusyWaitCycles = 2'000'000;  // about 1 ms at 2 GHz

// Spins one thread for `cycles` clock cycles: the GPU is busy while the host enqueues the timed work.
__global__ void busy_wait(long long cycles) {
    const long long start = clock64();
    while (clock64() - start < cycles) {
    }
}

struct Timer {
    cudaStream_t stream;
    bool busy_wait_first;
    cudaEvent_t start{}, stop{};

    Timer(cudaStream_t s, bool busy) : stream(s), busy_wait_first(busy) {
        check(cudaEventCreate(&start), "cudaEventCreate");
        check(cudaEventCreate(&stop), "cudaEventCreate");
    }
    ~Timer() {
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
    }
    Timer(const Timer&) = delete;
    Timer& operator=(const Timer&) = delete;

    // Milliseconds between events recorded before and after `enqueue()` puts its work on the stream.
    template <typename F>
    double once(F&& enqueue) {
        if (busy_wait_first) {
            busy_wait<<<1, 1, 0, stream>>>(kBusyWaitCycles);
            check(cudaGetLastError(), "launching the busy-wait kernel");
        }
        check(cudaEventRecord(start, stream), "cudaEventRecord");
        enqueue();
        check(cudaEventRecord(stop, stream), "cudaEventRecord");
        check(cudaEventSynchronize(stop), "waiting for the timed work");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
        return ms;
    }

    // The median of `repeat` timed runs after `warm_up` untimed ones.
    template <typename F>
    double median(int warm_up, int repeat, F&& enqueue) {
        for (int i = 0; i < warm_up; ++i) once(enqueue);
        std::vector<double> samples;
        for (int i = 0; i < repeat; ++i) samples.push_back(once(enqueue));
        std::sort(samples.begin(), samples.end());
        const size_t n = samples.size();
        return n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
    }
};

// Thrust's temporary storage, kept between calls: blocks are cudaMalloc'ed the first time a size
// is asked for and handed out again afterwards (the interface thrust documents for a custom
// temporary allocator: value_type, allocate and deallocate, passed with `par(allocator)`).
class CachingAllocator {
  public:
    using value_type = char;

    CachingAllocator() = default;
    CachingAllocator(const CachingAllocator&) = delete;
    CachingAllocator& operator=(const CachingAllocator&) = delete;
    ~CachingAllocator() {
        for (auto& [bytes, ptr] : free_) cudaFree(ptr);
        for (auto& [ptr, bytes] : used_) cudaFree(ptr);
    }

    char* allocate(std::ptrdiff_t bytes) {
        auto it = free_.lower_bound(static_cast<size_t>(bytes));
        char* ptr;
        size_t size;
        if (it != free_.end()) {
            size = it->first;
            ptr = it->second;
            free_.erase(it);
        } else {
            size = static_cast<size_t>(bytes);
            if (cudaMalloc(&ptr, std::max<size_t>(size, 1)) != cudaSuccess) {
                cudaGetLastError();  // clear it; thrust reports bad_alloc
                throw std::bad_alloc();
            }
        }
        used_.emplace(ptr, size);
        return ptr;
    }

    void deallocate(char* ptr, size_t) {
        auto it = used_.find(ptr);
        if (it == used_.end()) return;
        free_.emplace(it->second, ptr);
        used_.erase(it);
    }

  private:
    std::multimap<size_t, char*> free_;
    std::map<char*, size_t> used_;
};

// ---------------------------------------------------------------------------------------------
// The peers

struct Row {
    std::string peer;
    std::optional<double> ms;
    std::optional<std::string> output;
    std::optional<std::string> error;
    std::optional<size_t> outputs{};  // the count of keys a set operation wrote; none for a merge
};

// The set operations of --set.
enum class SetOp { Union, Intersection, Difference, SymmetricDifference };

struct SetOpInfo {
    SetOp op;
    const char* name;  // on the command line and in the JSON
    const char* peer;  // the row's peer: thrust's function
};

constexpr SetOpInfo kSetOps[] = {
    {SetOp::Union, "union", "thrust::set_union"},
    {SetOp::Intersection, "intersection", "thrust::set_intersection"},
    {SetOp::Difference, "difference", "thrust::set_difference"},
    {SetOp::SymmetricDifference, "symmetric-difference", "thrust::set_symmetric_difference"},
};

const SetOpInfo& info(SetOp op) {
    for (const auto& s : kSetOps)
        if (s.op == op) return s;
    throw std::logic_error("unknown set operation");
}

// thrust::set_<op> of the sorted keys [a_first, a_last) and [b_first, b_last) into `out` under
// `policy`; returns the end of the keys it wrote.
template <typename Policy, typename In, typename Out>
Out thrust_set(SetOp op, const Policy& policy, In a_first, In a_last, In b_first, In b_last, Out out) {
    switch (op) {
        case SetOp::Union:
            return thrust::set_union(policy, a_first, a_last, b_first, b_last, out);
        case SetOp::Intersection:
            return thrust::set_intersection(policy, a_first, a_last, b_first, b_last, out);
        case SetOp::Difference:
            return thrust::set_difference(policy, a_first, a_last, b_first, b_last, out);
        case SetOp::SymmetricDifference:
            return thrust::set_symmetric_difference(policy, a_first, a_last, b_first, b_last, out);
    }
    throw std::logic_error("unknown set operation");
}

struct Options {
    std::string a, b;
    std::optional<std::string> out, cub_out, values_out, cub_values_out;
    // Merge by key with values of this type (Dtype::U32 or Dtype::U64).
    std::optional<Dtype> values;
    // A set operation instead of a merge.
    std::optional<SetOp> set;
    int repeat = 50;
    int warm_up = 3;
    int device = 0;
    bool busy_wait = false;
    bool info = false;
};

// The first `count` keys of `c`, on the host.
template <typename T>
std::vector<T> download(const thrust::device_vector<T>& c, size_t count) {
    std::vector<T> host(std::min(count, c.size()));
    if (!host.empty())
        check(cudaMemcpy(host.data(), thrust::raw_pointer_cast(c.data()), host.size() * sizeof(T),
                         cudaMemcpyDeviceToHost),
              "downloading the output");
    return host;
}

// Times `enqueue`, then `poison`s its outputs, runs it once more and `save`s them; the row says
// why, if any step failed.
template <typename F, typename Poison, typename Save>
Row time_peer_with(const char* peer, Timer& timer, const Options& options, F&& enqueue, Poison&& poison,
                   Save&& save) {
    Row row{peer, std::nullopt, std::nullopt, std::nullopt};
    try {
        row.ms = timer.median(options.warm_up, options.repeat, enqueue);
        poison();
        enqueue();
        check(cudaStreamSynchronize(timer.stream), "running the merge");
        row.output = save();
    } catch (const std::exception& e) {  // CudaError, thrust::system_error, std::bad_alloc
        row.ms.reset();
        row.error = e.what();
        cudaGetLastError();  // a failed launch must not fail the next peer
    }
    return row;
}

// Poisons `c` (every byte 0xFF) on `stream`.
template <typename T>
void poison(thrust::device_vector<T>& c, cudaStream_t stream) {
    if (!c.empty())
        check(cudaMemsetAsync(thrust::raw_pointer_cast(c.data()), 0xFF, c.size() * sizeof(T), stream),
              "poisoning the output");
}

// Saves `c` (its first `count` keys, if given: the outputs of a set operation) to `out`, if
// given; returns the path written.
template <typename T>
std::optional<std::string> save(const thrust::device_vector<T>& c, Dtype dtype, const std::optional<std::string>& out,
                                std::optional<size_t> count = std::nullopt) {
    if (!out) return std::nullopt;
    write_npy(*out, dtype, download(c, count.value_or(c.size())));
    return out;
}

// Times `enqueue` (a merge into `c`), then poisons `c`, runs it once more and saves `c` to `out`.
template <typename T, typename F>
Row time_peer(const char* peer, Timer& timer, const Options& options, Dtype dtype,
              thrust::device_vector<T>& c, const std::optional<std::string>& out, F&& enqueue) {
    return time_peer_with(
        peer, timer, options, enqueue, [&] { poison(c, timer.stream); }, [&] { return save(c, dtype, out); });
}

#if MERGE_PEERS_HAVE_CUB_MERGE
// A CUB peer: `cub_call(temp, temp_bytes)` is the CUB call on temporary storage `temp` of
// `temp_bytes` (with `temp` null, it sizes it); the storage is allocated once, then `time` gets a
// callable that enqueues the call and returns the peer's row. The row says why, if a step failed.
template <typename Call, typename Time>
Row cub_peer(const char* peer, Call&& cub_call, Time&& time) {
    void* temp = nullptr;
    size_t temp_bytes = 0;
    Row row{peer, std::nullopt, std::nullopt, std::nullopt};
    try {
        check(cub_call(nullptr, temp_bytes), "sizing cub::DeviceMerge's temporary storage");
        check(cudaMalloc(&temp, std::max<size_t>(temp_bytes, 1)), "allocating cub::DeviceMerge's temporary storage");
        row = time([&] { check(cub_call(temp, temp_bytes), peer); });
    } catch (const std::exception& e) {
        row.error = e.what();
        cudaGetLastError();
    }
    if (temp) cudaFree(temp);
    return row;
}

#else
// The row of a CUB peer this CCCL does not have.
Row cub_missing(const char* peer) {
    return Row{peer, std::nullopt, std::nullopt,
               "cub::DeviceMerge is not in CUB " + dotted(CUB_VERSION, 100000, 100) +
                   " (it first appears in CCCL 2.7, CUDA 12.8)"};
}
#endif

// The JSON fields of one run: the inputs, the value type of a merge by key (or null), the set
// operation (or null), the copy and the peers' rows.
std::string report(const Options& options, const NpyFile& npy_a, const NpyFile& npy_b, std::optional<Dtype> values,
                   double copy_ms, const std::vector<Row>& rows) {
    std::ostringstream json;
    json << "\"m\": " << npy_a.len << ", \"n\": " << npy_b.len << ", \"dtype\": " << json_string(info(npy_a.dtype).name)
         << ", \"values\": " << (values ? json_string(info(*values).name) : "null")
         << ", \"set\": " << (options.set ? json_string(info(*options.set).name) : "null")
         << ", \"input_a\": " << json_string(npy_a.path) << ", \"input_b\": " << json_string(npy_b.path)
         << ", \"repeat\": " << options.repeat << ", \"warm_up\": " << options.warm_up
         << ", \"busy_wait\": " << (options.busy_wait ? "true" : "false")
         << ", \"copy_ms\": " << json_number(copy_ms) << ", \"rows\": [";
    for (size_t i = 0; i < rows.size(); ++i) {
        const Row& r = rows[i];
        json << (i ? ", " : "") << "{\"peer\": " << json_string(r.peer) << ", \"ms\": " << json_number(r.ms)
             << ", \"output\": " << json_optional_string(r.output)
             << ", \"outputs\": " << (r.outputs ? std::to_string(*r.outputs) : "null")
             << ", \"error\": " << json_optional_string(r.error) << "}";
    }
    json << "]";
    return json.str();
}

// The keys of `npy`, read from its file and uploaded.
template <typename T>
thrust::device_vector<T> upload_keys(const NpyFile& npy) {
    const std::vector<T> host = read_npy_data<T>(npy);
    return thrust::device_vector<T>(host.begin(), host.end());
}

// The merge of keys of T (thrust and CUB), or with --set the set operation (thrust), and the copy.
template <typename T>
std::string run(const Options& options, const NpyFile& npy_a, const NpyFile& npy_b) {
    const Dtype dtype = npy_a.dtype;
    const size_t m = npy_a.len, n = npy_b.len;
    thrust::device_vector<T> a = upload_keys<T>(npy_a), b = upload_keys<T>(npy_b), c;
    c.resize(m + n);
    check(cudaDeviceSynchronize(), "uploading A and B");
    cudaStream_t stream;
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    Timer timer(stream, options.busy_wait);
    T* const pa = thrust::raw_pointer_cast(a.data());
    T* const pb = thrust::raw_pointer_cast(b.data());
    T* const pc = thrust::raw_pointer_cast(c.data());

    const double copy_ms = timer.median(options.warm_up, options.repeat, [&] {
        if (m) check(cudaMemcpyAsync(pc, pa, m * sizeof(T), cudaMemcpyDeviceToDevice, stream), "copying A");
        if (n)
            check(cudaMemcpyAsync(pc + m, pb, n * sizeof(T), cudaMemcpyDeviceToDevice, stream), "copying B");
    });

    std::vector<Row> rows;
    if (options.set) {
        // thrust's set operation alone (CUB has none). It synchronises the stream and reads the
        // count of outputs back before it returns (par_nosync or not): that wait is timed with it.
        // `count` is the last run's: after the timing, that of the run whose outputs are saved.
        const SetOpInfo& op = info(*options.set);
        CachingAllocator cache;
        size_t count = 0;
        Row row = time_peer_with(
            op.peer, timer, options,
            [&] {
                count = static_cast<size_t>(thrust_set(op.op, thrust::cuda::par_nosync(cache).on(stream), a.begin(),
                                                       a.end(), b.begin(), b.end(), c.begin()) -
                                            c.begin());
            },
            [&] { poison(c, stream); }, [&] { return save(c, dtype, options.out, count); });
        if (!row.error) row.outputs = count;
        rows.push_back(row);
    } else {
        {
            CachingAllocator cache;
            rows.push_back(time_peer("thrust::merge", timer, options, dtype, c, options.out, [&] {
                thrust::merge(thrust::cuda::par_nosync(cache).on(stream), a.begin(), a.end(), b.begin(), b.end(),
                              c.begin());
            }));
        }

#if MERGE_PEERS_HAVE_CUB_MERGE
        rows.push_back(cub_peer("cub::DeviceMerge", [&](void* temp, size_t& temp_bytes) {
            return cub::DeviceMerge::MergeKeys(temp, temp_bytes, pa, static_cast<std::int64_t>(m), pb,
                                               static_cast<std::int64_t>(n), pc, ::cuda::std::less<T>{}, stream);
        }, [&](const auto& merge) {
            return time_peer("cub::DeviceMerge", timer, options, dtype, c, options.cub_out, merge);
        }));
#else
        rows.push_back(cub_missing("cub::DeviceMerge"));
#endif
    }
    cudaStreamDestroy(stream);

    return report(options, npy_a, npy_b, std::nullopt, copy_ms, rows);
}

// The values that travel with the keys of A (`from_b` false) or B: each key's index, with the top
// bit set for B's (our `merge --values` generates the same).
template <typename V>
thrust::device_vector<V> source_values(bool from_b, size_t len) {
    std::vector<V> host(len);
    const V top = from_b ? V(1) << (8 * sizeof(V) - 1) : V(0);
    for (size_t i = 0; i < len; ++i) host[i] = top | static_cast<V>(i);
    return thrust::device_vector<V>(host.begin(), host.end());
}

// Merge by key: keys of T with values of V (see the header).
template <typename T, typename V>
std::string run_by_key(const Options& options, const NpyFile& npy_a, const NpyFile& npy_b) {
    const Dtype dtype = npy_a.dtype, value_dtype = *options.values;
    const size_t m = npy_a.len, n = npy_b.len;
    thrust::device_vector<T> a = upload_keys<T>(npy_a), b = upload_keys<T>(npy_b), c;
    thrust::device_vector<V> av = source_values<V>(false, m), bv = source_values<V>(true, n), cv(m + n);
    c.resize(m + n);
    check(cudaDeviceSynchronize(), "uploading A and B");
    cudaStream_t stream;
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    Timer timer(stream, options.busy_wait);
    T* const pa = thrust::raw_pointer_cast(a.data());
    T* const pb = thrust::raw_pointer_cast(b.data());
    T* const pc = thrust::raw_pointer_cast(c.data());
    V* const pav = thrust::raw_pointer_cast(av.data());
    V* const pbv = thrust::raw_pointer_cast(bv.data());
    V* const pcv = thrust::raw_pointer_cast(cv.data());

    const double copy_ms = timer.median(options.warm_up, options.repeat, [&] {
        if (m) {
            check(cudaMemcpyAsync(pc, pa, m * sizeof(T), cudaMemcpyDeviceToDevice, stream), "copying A");
            check(cudaMemcpyAsync(pcv, pav, m * sizeof(V), cudaMemcpyDeviceToDevice, stream), "copying A's values");
        }
        if (n) {
            check(cudaMemcpyAsync(pc + m, pb, n * sizeof(T), cudaMemcpyDeviceToDevice, stream), "copying B");
            check(cudaMemcpyAsync(pcv + m, pbv, n * sizeof(V), cudaMemcpyDeviceToDevice, stream),
                  "copying B's values");
        }
    });
    auto poison_both = [&] {
        poison(c, stream);
        poison(cv, stream);
    };
    auto save_both = [&](const std::optional<std::string>& keys_out, const std::optional<std::string>& values_out) {
        save(cv, value_dtype, values_out);
        return save(c, dtype, keys_out);
    };

    std::vector<Row> rows;
    {
        CachingAllocator cache;
        rows.push_back(time_peer_with(
            "thrust::merge_by_key", timer, options,
            [&] {
                thrust::merge_by_key(thrust::cuda::par_nosync(cache).on(stream), a.begin(), a.end(), b.begin(),
                                     b.end(), av.begin(), bv.begin(), c.begin(), cv.begin());
            },
            poison_both, [&] { return save_both(options.out, options.values_out); }));
    }
#if MERGE_PEERS_HAVE_CUB_MERGE
    rows.push_back(cub_peer("cub::DeviceMerge::MergePairs", [&](void* temp, size_t& temp_bytes) {
        return cub::DeviceMerge::MergePairs(temp, temp_bytes, pa, pav, static_cast<std::int64_t>(m), pb, pbv,
                                            static_cast<std::int64_t>(n), pc, pcv, ::cuda::std::less<T>{}, stream);
    }, [&](const auto& merge) {
        return time_peer_with("cub::DeviceMerge::MergePairs", timer, options, merge, poison_both,
                              [&] { return save_both(options.cub_out, options.cub_values_out); });
    }));
#else
    rows.push_back(cub_missing("cub::DeviceMerge::MergePairs"));
#endif
    cudaStreamDestroy(stream);
    return report(options, npy_a, npy_b, options.values, copy_ms, rows);
}

// The merge (or, with --values, the merge by key; with --set, the set operation) of keys of T.
template <typename T>
std::string run_keys(const Options& options, const NpyFile& npy_a, const NpyFile& npy_b) {
    if (!options.values) return run<T>(options, npy_a, npy_b);
    if (*options.values == Dtype::U32) return run_by_key<T, std::uint32_t>(options, npy_a, npy_b);
    return run_by_key<T, std::uint64_t>(options, npy_a, npy_b);
}

// The GPU and versions, as the first fields of the JSON object. Throws CudaError without a GPU.
std::string device_json(int device) {
    int count = 0;
    check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    if (device < 0 || device >= count)
        throw CudaError("no CUDA device " + std::to_string(device) + " (" + std::to_string(count) +
                        " found)");
    check(cudaSetDevice(device), "cudaSetDevice");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    int runtime = 0, driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    std::ostringstream json;
    json << "\"gpu\": " << json_string(prop.name) << ", \"compute_capability\": [" << prop.major << ", "
         << prop.minor << "], \"cuda_runtime\": "
         << json_string(std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10))
         << ", \"cuda_driver\": "
         << json_string(std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10))
         << ", \"thrust_version\": " << json_string(dotted(THRUST_VERSION, 100000, 100))
         << ", \"cub_version\": " << json_string(dotted(CUB_VERSION, 100000, 100)) << ", \"cccl_version\": "
#ifdef CCCL_VERSION
         << json_string(dotted(CCCL_VERSION, 1000000, 1000))
#else
         << "null"
#endif
         << ", \"cub_device_merge\": " << (MERGE_PEERS_HAVE_CUB_MERGE ? "true" : "false");
    return json.str();
}

int parse_int(const std::string& option, const std::string& text, int least) {
    char* end = nullptr;
    errno = 0;
    const long value = std::strtol(text.c_str(), &end, 10);
    if (errno != 0 || end == text.c_str() || *end != '\0' || value < least || value > 1'000'000)
        throw UsageError(option + " " + text + ": expected an integer from " + std::to_string(least));
    return static_cast<int>(value);
}

Options parse_args(int argc, char** argv) {
    Options options;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) throw UsageError(arg + " needs a value");
            return argv[++i];
        };
        if (arg == "--a")
            options.a = value();
        else if (arg == "--b")
            options.b = value();
        else if (arg == "--out")
            options.out = value();
        else if (arg == "--cub-out")
            options.cub_out = value();
        else if (arg == "--values-out")
            options.values_out = value();
        else if (arg == "--cub-values-out")
            options.cub_values_out = value();
        else if (arg == "--values") {
            const std::string type = value();
            if (type == "u32")
                options.values = Dtype::U32;
            else if (type == "u64")
                options.values = Dtype::U64;
            else
                throw UsageError("--values " + type + ": expected u32 or u64");
        }
        else if (arg == "--set") {
            const std::string name = value();
            const SetOpInfo* found = nullptr;
            for (const auto& s : kSetOps)
                if (name == s.name) found = &s;
            if (!found)
                throw UsageError("--set " + name +
                                 ": expected union, intersection, difference or symmetric-difference");
            options.set = found->op;
        }
        else if (arg == "--repeat")
            options.repeat = parse_int(arg, value(), 1);
        else if (arg == "--warm-up")
            options.warm_up = parse_int(arg, value(), 0);
        else if (arg == "--device")
            options.device = parse_int(arg, value(), 0);
        else if (arg == "--busy-wait")
            options.busy_wait = true;
        else if (arg == "--info")
            options.info = true;
        else if (arg == "--help" || arg == "-h") {
            std::printf(
                "usage: merge_peers --a A.npy --b B.npy [--out C.npy] [--cub-out D.npy] [--repeat 50] "
                "[--warm-up 3]\n"
                "                   [--device 0] [--busy-wait] [--values u32|u64 [--values-out V.npy] "
                "[--cub-values-out W.npy]]\n"
                "       merge_peers --a A.npy --b B.npy --set union|intersection|difference|symmetric-difference "
                "[--out C.npy]\n"
                "                   [--repeat 50] [--warm-up 3] [--device 0] [--busy-wait]\n"
                "       merge_peers --info [--device 0]\n"
                "Times thrust::merge, cub::DeviceMerge::MergeKeys and a device-to-device copy (the ceiling) "
                "on A and B\n"
                "(1-D .npy, little-endian int32/uint32/int64/uint64/float32/float64); prints one JSON object.\n"
                "With --values: thrust::merge_by_key and cub::DeviceMerge::MergePairs, each key with a value of\n"
                "its index (B's with the top bit set), against a copy of the keys and the values.\n"
                "With --set: thrust::set_union, set_intersection, set_difference or set_symmetric_difference\n"
                "(std::set_* multiset semantics) against the same copy; --out saves the keys it wrote, and the\n"
                "row's \"outputs\" says how many.\n");
            std::exit(0);
        } else
            throw UsageError("unknown argument " + arg + " (see --help)");
    }
    if (!options.info && (options.a.empty() || options.b.empty()))
        throw UsageError("--a A.npy and --b B.npy are required");
    if (options.set && options.values)
        throw UsageError("--set and --values are exclusive: a set operation takes keys alone");
    if (options.set && options.cub_out)
        throw UsageError("--cub-out: CUB has no set operations; with --set, --out saves thrust's outputs");
    return options;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const Options options = parse_args(argc, argv);
        // The input files first: a bad file is reported on any machine.
        std::optional<NpyFile> a, b;
        if (!options.info) {
            a = read_npy_header(options.a);
            b = read_npy_header(options.b);
            if (a->dtype != b->dtype) {
                throw UsageError(a->path + " holds " + info(a->dtype).numpy + " keys but " + b->path +
                                 " holds " + info(b->dtype).numpy + ": both inputs must have the same dtype");
            }
        }
        std::string device;
        try {
            device = device_json(options.device);
        } catch (const CudaError& e) {
            std::fprintf(stderr, "merge_peers: no CUDA GPU: %s\n", e.what());
            return 3;
        }
        if (options.info) {
            std::printf("{%s}\n", device.c_str());
            return 0;
        }
        std::string body;
        switch (a->dtype) {
            case Dtype::I32:
                body = run_keys<std::int32_t>(options, *a, *b);
                break;
            case Dtype::U32:
                body = run_keys<std::uint32_t>(options, *a, *b);
                break;
            case Dtype::I64:
                body = run_keys<std::int64_t>(options, *a, *b);
                break;
            case Dtype::U64:
                body = run_keys<std::uint64_t>(options, *a, *b);
                break;
            case Dtype::F32:
                body = run_keys<float>(options, *a, *b);
                break;
            case Dtype::F64:
                body = run_keys<double>(options, *a, *b);
                break;
        }
        std::printf("{%s, %s}\n", device.c_str(), body.c_str());
        return 0;
    } catch (const UsageError& e) {
        std::fprintf(stderr, "merge_peers: error: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {  // a CUDA failure outside a peer (uploading the inputs, ...)
        std::fprintf(stderr, "merge_peers: error: %s\n", e.what());
        return 1;
    }
}
