//! The device layer: thread, block and grid indices, barriers and launch-sized shared
//! memory, in Rust-CUDA's vocabulary (`thread::thread_idx_x()`, `thread::sync_threads()`).
//!
//! This is the only file that touches an nvptx intrinsic. On the host the same functions
//! exist so that kernel bodies type-check and lint there; calling one panics, except inside
//! [`emulation`], which runs kernel bodies on the CPU for tests: barrier-free ones thread by
//! thread ([`emulation::run`]), the others a block's threads at once
//! ([`emulation::run_blocks`]), with barriers, shared memory, shuffles and votes.

#[cfg(target_arch = "nvptx64")]
use core::arch::nvptx;

/// Defines `pub fn $name() -> u32` reading one special register on the GPU.
macro_rules! special_register {
    ($($(#[$doc:meta])* $name:ident => $intrinsic:ident;)*) => {$(
        $(#[$doc])*
        #[inline(always)]
        pub fn $name() -> u32 {
            #[cfg(target_arch = "nvptx64")]
            // SAFETY: reading a special register has no preconditions inside a kernel.
            unsafe { super::nvptx::$intrinsic() }
            #[cfg(not(target_arch = "nvptx64"))]
            super::emulation::register(stringify!($name))
        }
    )*};
}

/// Thread, block and grid coordinates (CUDA's `threadIdx`, `blockIdx`, `blockDim`,
/// `gridDim`) and the block-wide barrier.
pub mod thread {
    special_register! {
        /// `threadIdx.x`
        thread_idx_x => _thread_idx_x;
        /// `threadIdx.y`
        thread_idx_y => _thread_idx_y;
        /// `threadIdx.z`
        thread_idx_z => _thread_idx_z;
        /// `blockIdx.x`
        block_idx_x => _block_idx_x;
        /// `blockIdx.y`
        block_idx_y => _block_idx_y;
        /// `blockIdx.z`
        block_idx_z => _block_idx_z;
        /// `blockDim.x`
        block_dim_x => _block_dim_x;
        /// `blockDim.y`
        block_dim_y => _block_dim_y;
        /// `blockDim.z`
        block_dim_z => _block_dim_z;
        /// `gridDim.x`
        grid_dim_x => _grid_dim_x;
        /// `gridDim.z`
        grid_dim_z => _grid_dim_z;
    }

    /// This thread's index in a one-dimensional grid, `blockIdx.x · blockDim.x + threadIdx.x`,
    /// in 64 bits (grids of more than 2^32 threads).
    #[inline(always)]
    pub fn grid_thread_x() -> usize {
        block_idx_x() as usize * block_dim_x() as usize + thread_idx_x() as usize
    }

    /// `__syncthreads()`: waits until every thread of the block has reached it, and makes
    /// the block's shared-memory writes before it visible to the block after it.
    #[inline(always)]
    pub fn sync_threads() {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: a barrier has no memory preconditions; callers keep it block-uniform.
        unsafe {
            super::nvptx::_syncthreads()
        }
        #[cfg(not(target_arch = "nvptx64"))]
        super::emulation::sync_threads()
    }
}

/// Aborts the kernel: the launch fails and the host reports the error.
#[inline(always)]
pub fn trap() -> ! {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: `trap` only ends the kernel.
    unsafe {
        nvptx::trap()
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        if emulation::active() {
            panic!("the kernel trapped (gpu_kernels::device::trap): on the GPU the launch fails")
        }
        host_call("trap")
    }
}

/// The start of the block's launch-sized (dynamic) shared memory. Every call in a block
/// returns the same address; the host sets the size at launch from the kernel's constants.
#[inline(always)]
fn dynamic_shared_memory<T>() -> *mut T {
    #[cfg(target_arch = "nvptx64")]
    return core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<T>();
    #[cfg(not(target_arch = "nvptx64"))]
    emulation::shared_memory().cast()
}

#[cfg(not(target_arch = "nvptx64"))]
#[cold]
fn host_call(name: &str) -> ! {
    panic!("gpu_kernels::device::{name} only runs inside a GPU kernel")
}

#[cfg(not(target_arch = "nvptx64"))]
pub mod emulation;

pub mod tensor;

/// A one-dimensional array of `T` in the block's launch-sized shared memory, starting
/// `offset` elements of `T` from its start (so one block can hold several arrays).
///
/// Accesses are unchecked: the kernel's constants and the host's launch size guarantee
/// that every index is in bounds, and threads synchronise with
/// [`thread::sync_threads`] between writes and reads of other threads' elements.
#[derive(Clone, Copy)]
pub struct SharedArray<T> {
    base: *mut T,
}

impl<T: Copy> SharedArray<T> {
    /// The array at `offset` elements into the launch-sized shared memory.
    ///
    /// # Safety
    /// The launch must provide at least `offset` plus the array's length elements of
    /// shared memory.
    #[inline(always)]
    pub unsafe fn at_offset(offset: usize) -> Self {
        // SAFETY: in bounds of the launch-sized allocation, per the caller.
        Self { base: unsafe { dynamic_shared_memory::<T>().add(offset) } }
    }

    /// The address of element 0.
    #[inline(always)]
    pub fn as_mut_ptr(self) -> *mut T {
        self.base
    }

    /// `array[i]`.
    ///
    /// # Safety
    /// `i` is in bounds, and no other thread writes element `i` concurrently.
    #[inline(always)]
    pub unsafe fn read(self, i: usize) -> T {
        // SAFETY: per the caller.
        unsafe { self.base.add(i).read() }
    }

    /// `array[i .. i + V]` as one vector load ([`load_vector`]).
    ///
    /// # Safety
    /// The elements are in bounds, no other thread writes them concurrently, and element `i`
    /// is aligned as [`load_vector`] requires.
    #[inline(always)]
    pub unsafe fn read_vector<const V: usize>(self, i: usize) -> [T; V] {
        // SAFETY: per the caller.
        unsafe { load_vector(self.base.add(i)) }
    }

    /// `array[i] = value`.
    ///
    /// # Safety
    /// `i` is in bounds, and no other thread accesses element `i` concurrently.
    #[inline(always)]
    pub unsafe fn write(self, i: usize, value: T) {
        // SAFETY: per the caller.
        unsafe { self.base.add(i).write(value) }
    }

    /// `array[i .. i + V] = values` as one vector store ([`store_vector`]).
    ///
    /// # Safety
    /// The elements are in bounds, no other thread accesses them concurrently, and element
    /// `i` is aligned as [`store_vector`] requires.
    #[inline(always)]
    pub unsafe fn write_vector<const V: usize>(self, i: usize, values: [T; V]) {
        // SAFETY: per the caller.
        unsafe { store_vector(self.base.add(i), values) }
    }
}

/// A square `N × N` plane of `T` in shared memory, indexed `[y][x]` like the book's
/// `in_s[threadIdx.y][threadIdx.x]`.
#[derive(Clone, Copy)]
pub struct SharedPlane<T, const N: usize> {
    array: SharedArray<T>,
}

impl<T: Copy, const N: usize> SharedPlane<T, N> {
    /// Elements in one plane.
    pub const LEN: usize = N * N;

    /// Plane number `index` of consecutive planes in the launch-sized shared memory.
    ///
    /// # Safety
    /// The launch must provide at least `(index + 1) * N * N` elements of shared memory.
    #[inline(always)]
    pub unsafe fn nth(index: usize) -> Self {
        // SAFETY: per the caller.
        Self { array: unsafe { SharedArray::at_offset(index * Self::LEN) } }
    }

    /// `plane[y][x]`.
    ///
    /// # Safety
    /// `y, x < N`, and no other thread writes that element concurrently.
    #[inline(always)]
    pub unsafe fn read(self, y: usize, x: usize) -> T {
        // SAFETY: per the caller.
        unsafe { self.array.read(y * N + x) }
    }

    /// `plane[y][x] = value`.
    ///
    /// # Safety
    /// `y, x < N`, and no other thread accesses that element concurrently.
    #[inline(always)]
    pub unsafe fn write(self, y: usize, x: usize, value: T) {
        // SAFETY: per the caller.
        unsafe { self.array.write(y * N + x, value) }
    }
}

/// An `N × N × N` cube of `T` in shared memory, indexed `[z][y][x]`.
#[derive(Clone, Copy)]
pub struct SharedCube<T, const N: usize> {
    array: SharedArray<T>,
}

impl<T: Copy, const N: usize> SharedCube<T, N> {
    /// Elements in the cube.
    pub const LEN: usize = N * N * N;

    /// The cube at the start of the launch-sized shared memory.
    ///
    /// # Safety
    /// The launch must provide at least `N * N * N` elements of shared memory.
    #[inline(always)]
    pub unsafe fn new() -> Self {
        // SAFETY: per the caller.
        Self { array: unsafe { SharedArray::at_offset(0) } }
    }

    /// `cube[z][y][x]`.
    ///
    /// # Safety
    /// `z, y, x < N`, and no other thread writes that element concurrently.
    #[inline(always)]
    pub unsafe fn read(self, z: usize, y: usize, x: usize) -> T {
        // SAFETY: per the caller.
        unsafe { self.array.read((z * N + y) * N + x) }
    }

    /// `cube[z][y][x] = value`.
    ///
    /// # Safety
    /// `z, y, x < N`, and no other thread accesses that element concurrently.
    #[inline(always)]
    pub unsafe fn write(self, z: usize, y: usize, x: usize, value: T) {
        // SAFETY: per the caller.
        unsafe { self.array.write((z * N + y) * N + x, value) }
    }
}

/// `value`, hidden from the optimiser at this point of the program (a `mov` it may not remove
/// or move across other side effects such as barriers): work that depends on it cannot be
/// hoisted above it. Unlike `core::hint::black_box` it needs no local memory.
#[inline(always)]
pub fn opaque(value: i32) -> i32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let hidden: i32;
        // SAFETY: a register move; not `pure`, so it stays where it is written.
        unsafe {
            core::arch::asm!("mov.b32 {d}, {s};", d = out(reg32) hidden, s = in(reg32) value,
                options(nomem, nostack, preserves_flags))
        };
        hidden
    }
    #[cfg(not(target_arch = "nvptx64"))]
    value
}

/// Writes `value` (4 or 8 bytes) to `ptr` if `condition` holds, as one predicated store
/// (`@p st.global`): no branch, so the lanes that store and those that do not stay converged and
/// the compiler needs no reconvergence point around it.
///
/// # Safety
/// `ptr` points into a global-memory allocation and is valid for writing a `T` (even when
/// `condition` is false, so that the address is always a real one), aligned for `T`.
#[inline(always)]
pub unsafe fn store_if<T: Copy>(ptr: *mut T, value: T, condition: bool) {
    const { assert!(size_of::<T>() == 4 || size_of::<T>() == 8, "store_if writes 4- or 8-byte values") };
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: per the caller; the sizes match (checked above).
    unsafe {
        if size_of::<T>() == 4 {
            let word: u32 = core::mem::transmute_copy(&value);
            core::arch::asm!(
                "{{ .reg .pred p; setp.ne.u32 p, {c}, 0; @p st.global.b32 [{ptr}], {v}; }}",
                c = in(reg32) u32::from(condition), ptr = in(reg64) ptr, v = in(reg32) word,
                options(nostack, preserves_flags)
            );
        } else {
            let word: u64 = core::mem::transmute_copy(&value);
            core::arch::asm!(
                "{{ .reg .pred p; setp.ne.u32 p, {c}, 0; @p st.global.b64 [{ptr}], {v}; }}",
                c = in(reg32) u32::from(condition), ptr = in(reg64) ptr, v = in(reg64) word,
                options(nostack, preserves_flags)
            );
        }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    if condition {
        // SAFETY: per the caller.
        unsafe { ptr.write(value) }
    }
}

/// Exchanging registers between the lanes of a warp (`__shfl_up_sync`, `__shfl_down_sync`,
/// `__shfl_xor_sync`, `__ballot_sync`, with every lane taking part). Values of 4 or 8 bytes; an
/// 8-byte value moves as two 32-bit shuffles.
pub mod warp {
    /// Lanes in a warp.
    pub const LANES: u32 = 32;

    /// The `value` of lane `lane − 1`; lane 0 gets its own. Every lane of the warp must call it
    /// (converged), as with `__shfl_up_sync(0xffffffff, value, 1)`.
    #[inline(always)]
    pub fn from_lane_below<T: Copy>(value: T) -> T {
        by_words(value, |word| shuffle_word(word, Direction::Up))
    }

    /// The `value` of lane `lane + 1`; lane 31 gets its own. Converged, as
    /// [`from_lane_below`].
    #[inline(always)]
    pub fn from_lane_above<T: Copy>(value: T) -> T {
        by_words(value, |word| shuffle_word(word, Direction::Down))
    }

    /// The `value` of lane `lane − delta`; lanes below `delta` get their own (`__shfl_up_sync`
    /// with a lane distance known only at run time). Converged, as [`from_lane_below`].
    #[inline(always)]
    pub fn from_lanes_below<T: Copy>(value: T, delta: u32) -> T {
        by_words(value, |word| shuffle_word(word, Direction::UpBy(delta)))
    }

    /// The `value` of lane `lane ^ mask` (`__shfl_xor_sync`: a butterfly step of a warp-wide
    /// reduction). Converged, as [`from_lane_below`].
    #[inline(always)]
    pub fn from_lane_xor<T: Copy>(value: T, mask: u32) -> T {
        by_words(value, |word| shuffle_word(word, Direction::Xor(mask)))
    }

    /// The `value` of lane `source` (`__shfl_sync`, lanes `0 .. 32`). Converged, as
    /// [`from_lane_below`].
    #[inline(always)]
    pub fn from_lane<T: Copy>(value: T, source: u32) -> T {
        by_words(value, |word| shuffle_word(word, Direction::From(source)))
    }

    /// Waits until every lane of the warp has reached it, and orders their shared-memory accesses
    /// before it before theirs after it (`__syncwarp()`). Converged, as [`from_lane_below`].
    #[inline(always)]
    pub fn sync() {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: a warp barrier touches no registers or memory of its own.
        unsafe {
            core::arch::asm!("bar.warp.sync 0xffffffff;", options(nostack, preserves_flags))
        }
        #[cfg(not(target_arch = "nvptx64"))]
        super::emulation::sync_warp()
    }

    /// A bit per lane of the warp, set where that lane's `predicate` holds
    /// (`__ballot_sync(0xffffffff, predicate)`). Converged, as [`from_lane_below`].
    #[inline(always)]
    pub fn ballot(predicate: bool) -> u32 {
        #[cfg(target_arch = "nvptx64")]
        {
            let bits: u32;
            // SAFETY: a full-warp vote touches registers only; not `pure`, as the shuffles.
            unsafe {
                core::arch::asm!(
                    "{{ .reg .pred p; setp.ne.u32 p, {x}, 0; vote.sync.ballot.b32 {d}, p, 0xffffffff; }}",
                    d = out(reg32) bits, x = in(reg32) u32::from(predicate), options(nostack, preserves_flags)
                )
            };
            bits
        }
        #[cfg(not(target_arch = "nvptx64"))]
        super::emulation::ballot(predicate)
    }

    /// Which lane a lane reads: the one below (`shfl.up`) or above (`shfl.down`), `delta` below,
    /// the lane whose index differs by the bits of a mask (`shfl.bfly`), or a given lane
    /// (`shfl.idx`).
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Direction {
        Up,
        Down,
        UpBy(u32),
        Xor(u32),
        From(u32),
    }

    /// One full-warp shuffle of a 32-bit word by one lane.
    #[inline(always)]
    fn shuffle_word(word: u32, direction: Direction) -> u32 {
        #[cfg(target_arch = "nvptx64")]
        {
            let moved: u32;
            // SAFETY: a full-warp shuffle touches registers only; not `pure`, so it is never
            // moved into a branch where some lanes would miss it.
            unsafe {
                match direction {
                    Direction::Up => core::arch::asm!("shfl.sync.up.b32 {d}, {a}, 1, 0, 0xffffffff;",
                        d = out(reg32) moved, a = in(reg32) word, options(nostack, preserves_flags)),
                    Direction::Down => core::arch::asm!("shfl.sync.down.b32 {d}, {a}, 1, 31, 0xffffffff;",
                        d = out(reg32) moved, a = in(reg32) word, options(nostack, preserves_flags)),
                    Direction::UpBy(delta) => {
                        core::arch::asm!("shfl.sync.up.b32 {d}, {a}, {b}, 0, 0xffffffff;",
                        d = out(reg32) moved, a = in(reg32) word, b = in(reg32) delta,
                        options(nostack, preserves_flags))
                    }
                    Direction::Xor(mask) => {
                        core::arch::asm!("shfl.sync.bfly.b32 {d}, {a}, {b}, 31, 0xffffffff;",
                        d = out(reg32) moved, a = in(reg32) word, b = in(reg32) mask,
                        options(nostack, preserves_flags))
                    }
                    Direction::From(source) => {
                        core::arch::asm!("shfl.sync.idx.b32 {d}, {a}, {b}, 31, 0xffffffff;",
                        d = out(reg32) moved, a = in(reg32) word, b = in(reg32) source,
                        options(nostack, preserves_flags))
                    }
                }
            };
            moved
        }
        #[cfg(not(target_arch = "nvptx64"))]
        super::emulation::shuffle(word, |lane| direction.source(lane))
    }

    #[cfg(not(target_arch = "nvptx64"))]
    impl Direction {
        /// The lane that lane `lane` reads, as PTX's `shfl.sync` with the clamps above picks it
        /// (its own where the source lies outside the warp).
        fn source(self, lane: u32) -> u32 {
            let within = |source: Option<u32>| source.filter(|&s| s < LANES).unwrap_or(lane);
            match self {
                Self::Up => within(lane.checked_sub(1)),
                Self::Down => within(lane.checked_add(1)),
                Self::UpBy(delta) => within(lane.checked_sub(delta)),
                Self::Xor(mask) => within(Some(lane ^ mask)),
                Self::From(source) => source % LANES,
            }
        }
    }

    /// `value` with `shuffle` applied to each of its 32-bit words.
    #[inline(always)]
    fn by_words<T: Copy>(value: T, shuffle: impl Fn(u32) -> u32) -> T {
        const { assert!(size_of::<T>() == 4 || size_of::<T>() == 8, "shuffles move 4- or 8-byte values") };
        // SAFETY: the sizes match (checked above), and the words come back in their places.
        unsafe {
            if size_of::<T>() == 4 {
                core::mem::transmute_copy(&shuffle(core::mem::transmute_copy::<T, u32>(&value)))
            } else {
                let bits: u64 = core::mem::transmute_copy(&value);
                let (low, high) = (shuffle(bits as u32), shuffle((bits >> 32) as u32));
                core::mem::transmute_copy(&(u64::from(high) << 32 | u64::from(low)))
            }
        }
    }
}

/// Suspends the thread for about `ns` nanoseconds (`nanosleep`, sm_70): a polite wait in a
/// polling loop. A hint: the thread may wake earlier or later.
#[inline(always)]
pub fn sleep_ns(ns: u32) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: sleeping touches no memory.
    unsafe {
        core::arch::asm!("nanosleep.u32 {t};", t = in(reg32) ns, options(nostack, preserves_flags))
    }
    #[cfg(not(target_arch = "nvptx64"))]
    let _ = ns;
}

/// Reads the 8 bytes at `ptr` in global memory as one relaxed atomic access at GPU scope
/// (`ld.relaxed.gpu.global.u64`): never torn, never served from a stale L1 line, so a word
/// another block stores with [`store_relaxed_u64`] is seen whole, old or new.
///
/// # Safety
/// `ptr` points into a global-memory allocation, 8-byte aligned.
#[inline(always)]
pub unsafe fn load_relaxed_u64(ptr: *const u64) -> u64 {
    #[cfg(target_arch = "nvptx64")]
    {
        let word: u64;
        // SAFETY: per the caller; not `pure`, so a polling loop reads again each time.
        unsafe {
            core::arch::asm!("ld.relaxed.gpu.global.u64 {d}, [{p}];", d = out(reg64) word, p = in(reg64) ptr,
                options(nostack, preserves_flags))
        };
        word
    }
    #[cfg(not(target_arch = "nvptx64"))]
    // SAFETY: per the caller (one host thread at a time).
    unsafe {
        ptr.read_volatile()
    }
}

/// Writes the 8 bytes `word` to `ptr` in global memory as one relaxed atomic access at GPU
/// scope (`st.relaxed.gpu.global.u64`), for [`load_relaxed_u64`] in other blocks.
///
/// # Safety
/// `ptr` points into a global-memory allocation, 8-byte aligned; other threads access it only
/// through these two functions.
#[inline(always)]
pub unsafe fn store_relaxed_u64(ptr: *mut u64, word: u64) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: per the caller.
    unsafe {
        core::arch::asm!("st.relaxed.gpu.global.u64 [{p}], {w};", p = in(reg64) ptr, w = in(reg64) word,
            options(nostack, preserves_flags))
    }
    #[cfg(not(target_arch = "nvptx64"))]
    // SAFETY: per the caller (one host thread at a time).
    unsafe {
        ptr.write_volatile(word)
    }
}

/// Asks the memory system to bring the 128-byte line holding `ptr` into L2
/// (`prefetch.global.L2`): no register waits for it, so a thread can have loads for planes
/// far ahead in flight at no register cost. A hint only: it never faults and changes no value.
///
/// # Safety
/// `ptr` points into a global-memory allocation.
#[inline(always)]
pub unsafe fn prefetch_l2<T>(ptr: *const T) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: a prefetch reads nothing into the program and writes nothing.
    unsafe {
        core::arch::asm!("prefetch.global.L2 [{p}];", p = in(reg64) ptr, options(nostack, readonly, preserves_flags))
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        // A prefetch changes no result: nothing to emulate.
        let _ = ptr;
        if !emulation::active() {
            host_call("prefetch_l2")
        }
    }
}

/// `V` consecutive elements from `ptr`, read with the widest loads their alignment allows
/// (one 16-byte `ld.global.v4.f32` / `ld.global.v2.f64` per 16 bytes; scalar when `V = 1`).
///
/// # Safety
/// `ptr` is valid for reading `V` elements and aligned to `V · size_of::<T>()` bytes, or to
/// 16 bytes when that is more; `V` is a power of two.
#[inline(always)]
pub unsafe fn load_vector<T: Copy, const V: usize>(ptr: *const T) -> [T; V] {
    // SAFETY: per the caller; the alignment promise is what lets LLVM emit vector loads.
    unsafe {
        core::hint::assert_unchecked(ptr.addr().is_multiple_of(vector_alignment::<T, V>()));
        ptr.cast::<[T; V]>().read()
    }
}

/// Writes `V` consecutive elements to `ptr` with the widest stores their alignment allows.
///
/// # Safety
/// As [`load_vector`], for writing.
#[inline(always)]
pub unsafe fn store_vector<T: Copy, const V: usize>(ptr: *mut T, values: [T; V]) {
    // SAFETY: per the caller.
    unsafe {
        core::hint::assert_unchecked(ptr.addr().is_multiple_of(vector_alignment::<T, V>()));
        ptr.cast::<[T; V]>().write(values)
    }
}

/// Writes the 16 bytes of `values` to global memory as one `st.global.v4.b32`, whatever the
/// element type. (A vector that is only copied, e.g. from shared memory, is not always stored
/// as one by [`store_vector`]: LLVM may split the copy into 8-byte halves.)
///
/// # Safety
/// `ptr` points into a global-memory allocation, is valid for writing 16 bytes and is 16-byte
/// aligned.
#[inline(always)]
pub unsafe fn store_global_16<T: Copy, const V: usize>(ptr: *mut T, values: [T; V]) {
    const { assert!(V * size_of::<T>() == 16, "store_global_16 stores 16 bytes") };
    // SAFETY: the sizes are equal (checked above), and any 16 bytes are four valid `u32`s.
    let [w0, w1, w2, w3]: [u32; 4] = unsafe { core::mem::transmute_copy(&values) };
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: per the caller.
    unsafe {
        core::arch::asm!(
            "st.global.v4.b32 [{p}], {{{w0}, {w1}, {w2}, {w3}}};",
            p = in(reg64) ptr,
            w0 = in(reg32) w0,
            w1 = in(reg32) w1,
            w2 = in(reg32) w2,
            w3 = in(reg32) w3,
            options(nostack, preserves_flags)
        )
    }
    #[cfg(not(target_arch = "nvptx64"))]
    // SAFETY: per the caller.
    unsafe {
        ptr.cast::<[u32; 4]>().write([w0, w1, w2, w3])
    }
}

/// The alignment [`load_vector`] and [`store_vector`] require: the vector's size, at most the
/// 16 bytes of the widest load PTX has.
pub const fn vector_alignment<T, const V: usize>() -> usize {
    let bytes = V * size_of::<T>();
    if bytes < 16 { bytes } else { 16 }
}

/// L2 eviction priorities for global loads and stores (`createpolicy` and `.L2::cache_hint`,
/// sm_80 and PTX 7.4): a load or store carries a policy that says which lines L2 should evict
/// first when it needs room. A streaming kernel marks what it will read again as last to go and
/// what it writes as first, so the lines it reuses outlive the stream around them.
///
/// On the GPU the hints exist in the sm_90 build of the PTX; the sm_70 build and the host load and
/// store plainly (a hint never changes a value).
pub mod l2 {
    use super::{load_vector, store_vector};

    /// An L2 eviction policy (an opaque 64-bit value on the GPU).
    #[derive(Clone, Copy, Debug)]
    pub struct Policy(#[allow(dead_code)] u64);

    /// Defines `Policy::$name()`, the fractional policy `$priority` for every access.
    macro_rules! policy {
        ($($(#[$doc:meta])* $name:ident => $priority:literal;)*) => {$(
            $(#[$doc])*
            #[inline(always)]
            pub fn $name() -> Self {
                #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
                {
                    let policy: u64;
                    // SAFETY: creates a value; reads and writes no memory.
                    unsafe {
                        core::arch::asm!(
                            concat!("createpolicy.fractional.L2::", $priority, ".b64 {q}, 1.0;"),
                            q = out(reg64) policy,
                            options(pure, nomem, nostack, preserves_flags)
                        )
                    };
                    Self(policy)
                }
                #[cfg(not(all(target_arch = "nvptx64", target_feature = "sm_90")))]
                Self(0)
            }
        )*};
    }

    impl Policy {
        policy! {
            /// Lines that will be read again: evicted after all others.
            evict_last => "evict_last";
            /// L2's default.
            evict_normal => "evict_normal";
            /// Lines not read again soon: evicted before all others.
            evict_first => "evict_first";
        }
    }

    /// As [`load_vector`], with `policy`: one `ld.global.L2::cache_hint` per 16 bytes (4, 8, 16
    /// or 32 bytes in all).
    ///
    /// # Safety
    /// As [`load_vector`], and `ptr` points into a global-memory allocation.
    #[inline(always)]
    pub unsafe fn load<T: Copy, const V: usize>(ptr: *const T, policy: Policy) -> [T; V] {
        const { assert!(matches!(V * size_of::<T>(), 4 | 8 | 16 | 32), "l2::load reads 4 to 32 bytes") };
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
        // SAFETY: per the caller; each arm reads exactly the vector's bytes, and the second
        // 16 bytes of a 32-byte vector are 16-byte aligned as its start is.
        unsafe {
            use core::mem::transmute_copy;
            let p = ptr.cast::<u8>();
            match V * size_of::<T>() {
                4 => transmute_copy(&hinted::load_1(p, policy.0)),
                8 => transmute_copy(&hinted::load_2(p, policy.0)),
                16 => transmute_copy(&hinted::load_4(p, policy.0)),
                _ => transmute_copy(&[hinted::load_4(p, policy.0), hinted::load_4(p.add(16), policy.0)]),
            }
        }
        #[cfg(not(all(target_arch = "nvptx64", target_feature = "sm_90")))]
        // SAFETY: per the caller.
        unsafe {
            let _ = policy;
            load_vector(ptr)
        }
    }

    /// As [`store_vector`], with `policy`: one `st.global.L2::cache_hint` per 16 bytes.
    ///
    /// # Safety
    /// As [`load`], for writing.
    #[inline(always)]
    pub unsafe fn store<T: Copy, const V: usize>(ptr: *mut T, values: [T; V], policy: Policy) {
        const { assert!(matches!(V * size_of::<T>(), 4 | 8 | 16 | 32), "l2::store writes 4 to 32 bytes") };
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
        // SAFETY: as in `load`.
        unsafe {
            use core::mem::transmute_copy;
            let p = ptr.cast::<u8>();
            match V * size_of::<T>() {
                4 => hinted::store_1(p, transmute_copy(&values), policy.0),
                8 => hinted::store_2(p, transmute_copy(&values), policy.0),
                16 => hinted::store_4(p, transmute_copy(&values), policy.0),
                _ => {
                    let [low, high]: [[u32; 4]; 2] = transmute_copy(&values);
                    hinted::store_4(p, low, policy.0);
                    hinted::store_4(p.add(16), high, policy.0);
                }
            }
        }
        #[cfg(not(all(target_arch = "nvptx64", target_feature = "sm_90")))]
        // SAFETY: per the caller.
        unsafe {
            let _ = policy;
            store_vector(ptr, values)
        }
    }

    /// The hinted loads and stores of 1, 2 and 4 words, whatever the element type.
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
    mod hinted {
        use core::arch::asm;

        /// Defines `$load(p, policy) -> [u32; $n]` and `$store(p, words, policy)`, whose PTX
        /// names the words `$operands`.
        macro_rules! hinted {
            ($load:ident, $store:ident, $n:literal, $vec:literal, $operands:literal, [$($w:ident),+]) => {
                #[inline(always)]
                pub unsafe fn $load(p: *const u8, policy: u64) -> [u32; $n] {
                    $(let $w: u32;)+
                    // SAFETY: per `l2::load`.
                    unsafe {
                        asm!(
                            concat!("ld.global.L2::cache_hint", $vec, ".b32 ", $operands, ", [{p}], {q};"),
                            $($w = out(reg32) $w,)+ p = in(reg64) p, q = in(reg64) policy,
                            options(pure, readonly, nostack, preserves_flags)
                        )
                    };
                    [$($w),+]
                }

                #[inline(always)]
                pub unsafe fn $store(p: *mut u8, [$($w),+]: [u32; $n], policy: u64) {
                    // SAFETY: per `l2::store`.
                    unsafe {
                        asm!(
                            concat!("st.global.L2::cache_hint", $vec, ".b32 [{p}], ", $operands, ", {q};"),
                            $($w = in(reg32) $w,)+ p = in(reg64) p, q = in(reg64) policy,
                            options(nostack, preserves_flags)
                        )
                    }
                }
            };
        }

        hinted!(load_1, store_1, 1, "", "{a}", [a]);
        hinted!(load_2, store_2, 2, ".v2", "{{{a}, {b}}}", [a, b]);
        hinted!(load_4, store_4, 4, ".v4", "{{{a}, {b}, {c}, {d}}}", [a, b, c, d]);
    }
}

/// Programmatic dependent launch (Hopper, `griddepcontrol`, sm_90 and PTX 7.8): a kernel the
/// host launches with the programmatic-serialization attribute may start before the kernel ahead
/// of it on the stream has finished, and must [`wait`](grid_dependency::wait) before it reads
/// that kernel's results; the kernel ahead may let it start early
/// ([`launch_dependents`](grid_dependency::launch_dependents)). Both do nothing in the portable
/// build and on the host, and `wait` returns at once in a kernel launched without the attribute.
pub mod grid_dependency {
    /// Whether this build overlaps dependent launches (the sm_90 build of the PTX).
    pub const AVAILABLE: bool = cfg!(all(target_arch = "nvptx64", target_feature = "sm_90"));

    /// Waits until every kernel this launch depends on has finished and its writes are visible.
    #[inline(always)]
    pub fn wait() {
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
        // SAFETY: a wait; it reads no operand. Not `nomem`: no load may move above it.
        unsafe {
            core::arch::asm!("griddepcontrol.wait;", options(nostack, preserves_flags))
        }
    }

    /// Lets the kernels that depend on this launch start once every block of it has said so
    /// (or ended): their blocks wait in [`wait`] for this launch's writes.
    #[inline(always)]
    pub fn launch_dependents() {
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
        // SAFETY: a signal to the scheduler; it reads and writes no memory of the kernel.
        unsafe {
            core::arch::asm!("griddepcontrol.launch_dependents;", options(nostack, preserves_flags))
        }
    }
}

/// Hopper's bulk copies (`cp.async.bulk`, sm_90 and PTX 8.0): one thread asks the copy engine
/// to move a 16-byte-aligned range from global to shared memory, and the block waits on a
/// transaction barrier (`mbarrier`) in shared memory that counts the bytes as they land. No
/// register of any thread holds the data on its way.
///
/// On the GPU these exist only in the sm_90 build of the PTX. On the host they do what they
/// promise, one thread at a time (a plain copy; the barrier does nothing), so the CPU tests
/// can run the kernels' bulk-load phases.
pub mod bulk {
    /// Bulk copies move whole 16-byte units between 16-byte-aligned addresses.
    pub const ALIGN: usize = 16;

    /// Whether this build has bulk copies (the sm_90 build of the PTX): kernels take their
    /// Hopper paths where it is true.
    pub const AVAILABLE: bool = cfg!(all(target_arch = "nvptx64", target_feature = "sm_90"));

    /// The 32-bit shared-memory address of a generic pointer into shared memory.
    #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
    #[inline(always)]
    pub(super) fn shared_address<T>(ptr: *const T) -> u32 {
        let address: u32;
        // SAFETY: a pure address conversion.
        unsafe {
            core::arch::asm!(
                "{{ .reg .u64 t; cvta.to.shared.u64 t, {p}; cvt.u32.u64 {a}, t; }}",
                p = in(reg64) ptr,
                a = out(reg32) address,
                options(pure, nomem, nostack, preserves_flags)
            )
        };
        address
    }

    /// Orders this thread's earlier accesses of shared memory (and, after a block-wide
    /// barrier, the block's) before later bulk copies into or out of it (`fence.proxy.async`):
    /// bulk copies run in the copy engine's "async proxy", which plain loads and stores do not
    /// order with. Needed before a buffer that threads have read is refilled by a bulk copy,
    /// and before one that threads have written is [`store`]d.
    #[inline(always)]
    pub fn fence_before_bulk_copies() {
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
        // SAFETY: a fence has no operands.
        unsafe {
            core::arch::asm!("fence.proxy.async.shared::cta;", options(nostack, preserves_flags))
        }
    }

    /// Copies `bytes` bytes from shared `src` to global `dst` in one bulk copy
    /// (`cp.async.bulk.global.shared::cta.bulk_group`) and waits until the copy has read its
    /// source (`cp.async.bulk.wait_group.read`), so that the shared memory may be reused or the
    /// block may exit; the writes to global memory complete on their own.
    ///
    /// # Safety
    /// `dst` (global) and `src` (shared) are 16-byte aligned and valid for `bytes` bytes, a
    /// multiple of 16; every write of `src` by the block's threads is ordered before the copy
    /// (each writer's [`fence_before_bulk_copies`], then a block-wide barrier).
    #[inline(always)]
    pub unsafe fn store<T>(dst: *mut T, src: *const T, bytes: u32) {
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
        // SAFETY: per the caller.
        unsafe {
            core::arch::asm!(
                "cp.async.bulk.global.shared::cta.bulk_group [{d}], [{s}], {n};",
                "cp.async.bulk.commit_group;",
                "cp.async.bulk.wait_group.read 0;",
                d = in(reg64) dst,
                s = in(reg32) shared_address(src),
                n = in(reg32) bytes,
                options(nostack, preserves_flags)
            )
        }
        #[cfg(not(all(target_arch = "nvptx64", target_feature = "sm_90")))]
        // SAFETY: per the caller.
        unsafe {
            copy_without_hopper(dst, src, bytes)
        }
    }

    /// A bulk copy where the sm_90 build's instructions are absent: on the host a plain copy,
    /// done at once; in the portable PTX a trap (its kernels never start one).
    ///
    /// # Safety
    /// `src` and `dst` are valid for `bytes` bytes and do not overlap.
    #[cfg(not(all(target_arch = "nvptx64", target_feature = "sm_90")))]
    #[inline(always)]
    unsafe fn copy_without_hopper<T>(dst: *mut T, src: *const T, bytes: u32) {
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: per the caller.
        unsafe {
            core::ptr::copy_nonoverlapping(src.cast::<u8>(), dst.cast::<u8>(), bytes as usize)
        }
        #[cfg(target_arch = "nvptx64")]
        {
            let _ = (dst, src, bytes);
            super::trap()
        }
    }

    /// A transaction barrier: 8 bytes of shared memory, 8-byte aligned.
    #[derive(Clone, Copy)]
    pub struct Barrier {
        #[cfg_attr(not(all(target_arch = "nvptx64", target_feature = "sm_90")), allow(dead_code))]
        at: *mut u64,
    }

    impl Barrier {
        /// The barrier at `at` in shared memory.
        ///
        /// # Safety
        /// `at` points to 8 bytes of the block's shared memory, 8-byte aligned, that nothing
        /// else uses while the barrier is.
        #[inline(always)]
        pub unsafe fn at(at: *mut u64) -> Self {
            Self { at }
        }

        /// The barrier's 8 bytes of shared memory (for the copies of [`tensor`](super::tensor)).
        #[cfg_attr(not(all(target_arch = "nvptx64", target_feature = "sm_90")), allow(dead_code))]
        #[inline(always)]
        pub(in crate::device) fn word(self) -> *mut u64 {
            self.at
        }

        /// Initialises the barrier for one arriving thread (`mbarrier.init`) and makes that
        /// visible to the copy engine (`fence.mbarrier_init`). One thread calls it, before a
        /// block-wide barrier that the waiting threads pass after it.
        ///
        /// # Safety
        /// No thread uses the barrier before the block-wide barrier that follows.
        #[inline(always)]
        pub unsafe fn init(self) {
            #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
            // SAFETY: per the caller and `at`'s contract.
            unsafe {
                core::arch::asm!(
                    "mbarrier.init.shared::cta.b64 [{a}], 1;",
                    "fence.mbarrier_init.release.cluster;",
                    a = in(reg32) shared_address(self.at),
                    options(nostack, preserves_flags)
                )
            }
        }

        /// Starts a bulk copy of `bytes` bytes from global `src` to shared `dst`, counted by
        /// this barrier (`cp.async.bulk…mbarrier::complete_tx::bytes`).
        ///
        /// # Safety
        /// `src` (global) and `dst` (shared) are 16-byte aligned and valid for `bytes` bytes,
        /// a multiple of 16; the barrier is initialised and `bytes` is part of the count a
        /// later [`arrive_expecting`](Self::arrive_expecting) announces; nothing reads `dst`
        /// until the barrier's phase completes.
        #[inline(always)]
        pub unsafe fn copy<T>(self, dst: *mut T, src: *const T, bytes: u32) {
            #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
            // SAFETY: per the caller.
            unsafe {
                core::arch::asm!(
                    "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [{d}], [{s}], {n}, [{a}];",
                    d = in(reg32) shared_address(dst),
                    s = in(reg64) src,
                    n = in(reg32) bytes,
                    a = in(reg32) shared_address(self.at),
                    options(nostack, preserves_flags)
                )
            }
            #[cfg(not(all(target_arch = "nvptx64", target_feature = "sm_90")))]
            // SAFETY: per the caller.
            unsafe {
                copy_without_hopper(dst, src, bytes)
            }
        }

        /// The one arrival of the current phase, announcing that `bytes` bytes of bulk copies
        /// will land (`mbarrier.arrive.expect_tx`): the phase completes when they have.
        ///
        /// # Safety
        /// The barrier is initialised; one thread arrives per phase.
        #[inline(always)]
        pub unsafe fn arrive_expecting(self, bytes: u32) {
            #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
            // SAFETY: per the caller.
            unsafe {
                core::arch::asm!(
                    "mbarrier.arrive.expect_tx.shared::cta.b64 _, [{a}], {n};",
                    a = in(reg32) shared_address(self.at),
                    n = in(reg32) bytes,
                    options(nostack, preserves_flags)
                )
            }
            #[cfg(not(all(target_arch = "nvptx64", target_feature = "sm_90")))]
            let _ = bytes;
        }

        /// Waits until phase `parity` (0 for the first) of the barrier has completed: every
        /// byte it expects has landed in shared memory and is visible to this thread.
        ///
        /// # Safety
        /// The barrier is initialised, and its initialisation is visible to this thread.
        #[inline(always)]
        pub unsafe fn wait(self, parity: u32) {
            #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
            loop {
                let done: u32;
                // SAFETY: per the caller.
                unsafe {
                    core::arch::asm!(
                        "{{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [{a}], {parity}; selp.u32 {d}, 1, 0, p; }}",
                        a = in(reg32) shared_address(self.at),
                        parity = in(reg32) parity,
                        d = out(reg32) done,
                        options(nostack, preserves_flags)
                    )
                };
                if done != 0 {
                    break;
                }
            }
            #[cfg(not(all(target_arch = "nvptx64", target_feature = "sm_90")))]
            let _ = parity;
        }

        /// Ends the barrier's life (`mbarrier.inval`), so that its shared memory may hold
        /// anything else. One thread calls it, after a block-wide barrier that every waiting
        /// thread passed after its wait.
        ///
        /// # Safety
        /// No thread uses the barrier any more.
        #[inline(always)]
        pub unsafe fn invalidate(self) {
            #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
            // SAFETY: per the caller.
            unsafe {
                core::arch::asm!(
                    "mbarrier.inval.shared::cta.b64 [{a}];",
                    a = in(reg32) shared_address(self.at),
                    options(nostack, preserves_flags)
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::l2;

    #[test]
    fn l2_hinted_loads_and_stores_move_the_values_unchanged() {
        #[repr(align(16))]
        struct Aligned<T>(T);
        let input = Aligned([1.5, -0.0, f64::MAX, 3.0f64]);
        let mut output = Aligned([0.0f64; 4]);
        for policy in [l2::Policy::evict_last(), l2::Policy::evict_normal(), l2::Policy::evict_first()] {
            // SAFETY: both arrays hold four aligned elements.
            let pair: [f64; 2] = unsafe { l2::load(input.0.as_ptr().add(2), policy) };
            assert_eq!(pair, [f64::MAX, 3.0]);
            let all: [f64; 4] = unsafe { l2::load(input.0.as_ptr(), policy) };
            unsafe { l2::store(output.0.as_mut_ptr(), all, policy) };
            assert_eq!(output.0.map(f64::to_bits), input.0.map(f64::to_bits));
        }
        let words: [f32; 4] = [1.0, 2.0, 3.0, 4.0];
        let mut out = [0.0f32; 4];
        // SAFETY: as above.
        unsafe {
            l2::store::<f32, 1>(
                out.as_mut_ptr().add(3),
                l2::load(words.as_ptr(), l2::Policy::evict_first()),
                l2::Policy::evict_first(),
            )
        };
        assert_eq!(out, [0.0, 0.0, 0.0, 1.0]);
    }
}
