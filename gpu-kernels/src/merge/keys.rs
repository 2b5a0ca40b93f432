//! Where keys are read from and written to. `co_rank` and `merge_sequential` are written once,
//! over these traits, and run on every kind of memory the kernels use: global memory (raw
//! pointers), a tile in shared memory ([`SharedKeys`]) and a circular buffer in shared memory
//! ([`Circular`](super::Circular)). On the host the same functions run over pointers into
//! slices, which is how the CPU tests exercise the code the GPU runs.

use crate::device::SharedArray;

/// A key type the merge kernels take: ordered by `PartialOrd` (no NaN may reach a kernel: the
/// host refuses such inputs), copied freely.
pub trait MergeKey: Copy + PartialOrd + 'static {
    /// The name used in entry points and on the command line (`"i32"`, `"f64"`, …).
    const NAME: &'static str;
    /// A key no other key is greater than (`MAX`, or infinity for floats): placed after a run,
    /// it stands for "this run is used up" in a serial merge (every key `<=` it).
    const GREATEST: Self;
    /// A key no other key is less than (`MIN`, or minus infinity): the end mark of a descending
    /// merge.
    const LEAST: Self;

    /// The key as the nearest `f64` (exact for every type but `i64` past 2^53, and never out of
    /// order: a greater key is never a smaller `f64`). The partition's interpolation search reads
    /// it to guess where a co-rank lies, never to decide one.
    fn nearest_f64(self) -> f64;
}

macro_rules! merge_keys {
    ($($t:ident => $greatest:expr, $least:expr);*) => {$(
        impl MergeKey for $t {
            const NAME: &'static str = stringify!($t);
            const GREATEST: Self = $greatest;
            const LEAST: Self = $least;
            #[inline(always)]
            fn nearest_f64(self) -> f64 {
                self as f64
            }
        }
    )*};
}

merge_keys!(
    i32 => i32::MAX, i32::MIN;
    u32 => u32::MAX, u32::MIN;
    i64 => i64::MAX, i64::MIN;
    f32 => f32::INFINITY, f32::NEG_INFINITY;
    f64 => f64::INFINITY, f64::NEG_INFINITY
);

/// A run of keys somewhere in memory, indexed from 0.
pub trait KeyRun: Copy {
    /// The run that starts `count` keys later (the book's `&A[i]`).
    ///
    /// # Safety
    /// `count` is at most the run's length.
    unsafe fn skip(self, count: usize) -> Self;
}

/// Read access to a run of keys.
pub trait KeyReader<K>: KeyRun {
    /// Key `i` of the run.
    ///
    /// # Safety
    /// `i` is within the run, and no other thread writes that key concurrently.
    unsafe fn load(self, i: usize) -> K;

    /// Keys `i .. i + V` of the run: one vector load where the memory has them (shared
    /// memory), `V` loads elsewhere.
    ///
    /// # Safety
    /// As [`load`](Self::load) for each key; key `i` is aligned to `V` keys, or 16 bytes.
    #[inline(always)]
    unsafe fn load_vector<const V: usize>(self, i: usize) -> [K; V] {
        // SAFETY: per the caller.
        core::array::from_fn(|e| unsafe { self.load(i + e) })
    }
}

/// Write access to a run of keys.
pub trait KeyWriter<K>: KeyRun {
    /// `run[i] = key`.
    ///
    /// # Safety
    /// `i` is within the run, and no other thread accesses that key concurrently.
    unsafe fn store(self, i: usize, key: K);
}

impl<K> KeyRun for *const K {
    #[inline(always)]
    unsafe fn skip(self, count: usize) -> Self {
        // SAFETY: stays within (or one past) the run, per the caller.
        unsafe { self.add(count) }
    }
}

impl<K: Copy> KeyReader<K> for *const K {
    #[inline(always)]
    unsafe fn load(self, i: usize) -> K {
        // SAFETY: in bounds, per the caller.
        unsafe { *self.add(i) }
    }
}

impl<K> KeyRun for *mut K {
    #[inline(always)]
    unsafe fn skip(self, count: usize) -> Self {
        // SAFETY: stays within (or one past) the run, per the caller.
        unsafe { self.add(count) }
    }
}

impl<K: Copy> KeyReader<K> for *mut K {
    #[inline(always)]
    unsafe fn load(self, i: usize) -> K {
        // SAFETY: in bounds, per the caller.
        unsafe { *self.add(i) }
    }
}

impl<K: Copy> KeyWriter<K> for *mut K {
    #[inline(always)]
    unsafe fn store(self, i: usize, key: K) {
        // SAFETY: in bounds, per the caller.
        unsafe { *self.add(i) = key }
    }
}

/// A tile of keys in the block's shared memory (the book's `A_S`, `B_S`).
#[derive(Clone, Copy)]
pub struct SharedKeys<K> {
    array: SharedArray<K>,
    start: usize,
}

impl<K: Copy> SharedKeys<K> {
    /// The keys starting `offset` elements of `K` into the launch-sized shared memory.
    ///
    /// # Safety
    /// The launch provides shared memory for every key the kernel accesses through it.
    #[inline(always)]
    pub unsafe fn at_offset(offset: usize) -> Self {
        // SAFETY: per the caller.
        Self { array: unsafe { SharedArray::at_offset(offset) }, start: 0 }
    }

    /// The address of the first key, for copies that write shared memory without a thread
    /// (bulk copies).
    #[inline(always)]
    pub fn as_mut_ptr(self) -> *mut K {
        self.array.as_mut_ptr().wrapping_add(self.start)
    }
}

impl<K: Copy> KeyRun for SharedKeys<K> {
    #[inline(always)]
    unsafe fn skip(self, count: usize) -> Self {
        Self { array: self.array, start: self.start + count }
    }
}

impl<K: Copy> KeyReader<K> for SharedKeys<K> {
    #[inline(always)]
    unsafe fn load(self, i: usize) -> K {
        // SAFETY: per the caller.
        unsafe { self.array.read(self.start + i) }
    }

    #[inline(always)]
    unsafe fn load_vector<const V: usize>(self, i: usize) -> [K; V] {
        // SAFETY: per the caller.
        unsafe { self.array.read_vector(self.start + i) }
    }
}

impl<K: Copy> KeyWriter<K> for SharedKeys<K> {
    #[inline(always)]
    unsafe fn store(self, i: usize, key: K) {
        // SAFETY: per the caller.
        unsafe { self.array.write(self.start + i, key) }
    }
}
