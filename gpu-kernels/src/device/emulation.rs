//! Kernel bodies on the CPU, for tests and for reading a kernel in a debugger. The special
//! registers ([`thread`](super::thread)'s indices and dimensions) come from a thread-local set
//! for each GPU thread being run, and two ways of running a launch cover two kinds of kernel:
//!
//! * [`run`] calls the body once for every thread of the launch, one thread after another. A
//!   body may read and write memory and prefetch (a no-op here); a barrier, a shuffle or shared
//!   memory panics, since threads that run one after another cannot wait for each other.
//! * [`run_blocks`] runs the blocks one after another, and the threads of a block as coroutines
//!   on the calling thread (`corosensei`'s stackful coroutines), each until it reaches a
//!   barrier or returns, in a shuffled order that is the same on every run: a barrier
//!   (`__syncthreads`, `__syncwarp`), the block's launch-sized shared memory and the warp's
//!   shuffles and votes work as on the GPU. Shared memory starts every block filled with `0xff`
//!   bytes (a NaN in every float type), so that a read before any write shows in the result. As
//!   on the GPU, a thread that has returned no longer holds up a barrier; a shuffle that reads a
//!   returned lane panics, and so do threads that wait at different barriers (a barrier in
//!   divergent code), where the GPU would hang or go wrong.
//!
//! What either checks is a kernel's arithmetic, indexing and the order of its barriers, bit for
//! bit against a reference; not its speed, nor races between threads (the GPU tests and
//! `compute-sanitizer` see those).

use std::cell::{Cell, RefCell, UnsafeCell};
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

use super::warp::LANES;

/// The special registers of the thread being run.
#[derive(Clone, Copy)]
struct Registers {
    thread: [u32; 3],
    block: [u32; 3],
    block_dim: [u32; 3],
    grid_dim: [u32; 3],
}

impl Registers {
    /// The thread's index in its block, x fastest (its warp is this over 32).
    fn linear_thread(&self) -> usize {
        let [x, y, z] = self.thread.map(|t| t as usize);
        let [bx, by, _] = self.block_dim.map(|d| d as usize);
        x + bx * (y + by * z)
    }
}

/// What a thread of [`run_blocks`] waits at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wait {
    /// `__syncthreads`: every thread of the block that has not returned.
    Block,
    /// `__syncwarp` or one half of a shuffle or vote: every lane of the warp that has not returned.
    Warp,
}

std::thread_local! {
    static CURRENT: Cell<Option<Registers>> = const { Cell::new(None) };
    /// The yielder of the coroutine being run by [`run_blocks`], null outside one.
    static YIELDER: Cell<*const Yielder<(), Wait>> = const { Cell::new(core::ptr::null()) };
    /// The block [`run_blocks`] runs, null outside it.
    static BLOCK: Cell<*const Block> = const { Cell::new(core::ptr::null()) };
}

/// Whether a kernel body is being run by [`run`] or [`run_blocks`] on this CPU thread.
pub fn active() -> bool {
    CURRENT.get().is_some()
}

/// The special register `name` of the thread being run (panics outside [`run`] and
/// [`run_blocks`]).
pub(super) fn register(name: &str) -> u32 {
    let Some(r) = CURRENT.get() else { super::host_call(name) };
    match name {
        "thread_idx_x" => r.thread[0],
        "thread_idx_y" => r.thread[1],
        "thread_idx_z" => r.thread[2],
        "block_idx_x" => r.block[0],
        "block_idx_y" => r.block[1],
        "block_idx_z" => r.block[2],
        "block_dim_x" => r.block_dim[0],
        "block_dim_y" => r.block_dim[1],
        "block_dim_z" => r.block_dim[2],
        "grid_dim_x" => r.grid_dim[0],
        "grid_dim_z" => r.grid_dim[2],
        _ => super::host_call(name),
    }
}

/// Calls `body` once for every thread of a launch of `grid_dim` blocks of `block_dim`
/// threads (CUDA's `(x, y, z)`), blocks and threads in order, x fastest.
pub fn run(grid_dim: (u32, u32, u32), block_dim: (u32, u32, u32), mut body: impl FnMut()) {
    let _leave = Leave;
    let (grid_dim, block_dim) = (<[u32; 3]>::from(grid_dim), <[u32; 3]>::from(block_dim));
    for block in indices(grid_dim) {
        for thread in indices(block_dim) {
            CURRENT.set(Some(Registers { thread, block, block_dim, grid_dim }));
            body();
        }
    }
}

/// Stack of each thread's coroutine: as much as a test thread's.
const STACK_BYTES: usize = 2 << 20;

/// Runs a launch of `grid_dim` blocks of `block_dim` threads with `shared_bytes` of
/// launch-sized shared memory: blocks in order, the threads of each as coroutines that run in
/// turn, each until it waits at a barrier or returns, so that barriers, shared memory, shuffles
/// and votes work. A panic in a thread ends the launch and is raised again here.
pub fn run_blocks(
    grid_dim: (u32, u32, u32),
    block_dim: (u32, u32, u32),
    shared_bytes: usize,
    body: impl Fn(),
) {
    let _leave = Leave;
    let (grid_dim, block_dim) = (<[u32; 3]>::from(grid_dim), <[u32; 3]>::from(block_dim));
    let threads: Vec<[u32; 3]> = indices(block_dim).collect();
    let block = Block::new(threads.len(), shared_bytes);
    BLOCK.set(&block);
    let mut stacks: Vec<DefaultStack> = (0..threads.len())
        .map(|_| DefaultStack::new(STACK_BYTES).expect("emulation: cannot map a thread's stack"))
        .collect();
    let body = &body;
    for block_index in indices(grid_dim) {
        block.reset();
        let mut running: Vec<Running> = threads
            .iter()
            .zip(stacks.drain(..))
            .map(|(&thread, stack)| {
                let registers = Registers { thread, block: block_index, block_dim, grid_dim };
                let enter = move |yielder: &Yielder<(), Wait>, ()| {
                    YIELDER.set(yielder);
                    CURRENT.set(Some(registers));
                    body()
                };
                // SAFETY: `body` outlives the coroutine, which this function drives to its end
                // or drops before it returns (or unwinds).
                let coroutine = unsafe { Coroutine::with_stack_unchecked(stack, enter) };
                Running { coroutine, linear: registers.linear_thread(), state: State::Ready }
            })
            .collect();
        // A panic is raised again once the other threads' coroutines are dropped (unwound),
        // not while it unwinds.
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| schedule(&mut running, &block, block_index))) {
            drop(running);
            resume_unwind(payload);
        }
        stacks = running.into_iter().map(|r| r.coroutine.into_stack()).collect();
    }
}

/// `__syncthreads()` inside [`run_blocks`].
pub(super) fn sync_threads() {
    wait("sync_threads", Wait::Block);
}

/// The start of the block's launch-sized shared memory inside [`run_blocks`].
pub(super) fn shared_memory() -> *mut u8 {
    with_block("dynamic_shared_memory", |block| block.shared_base().cast())
}

/// `__syncwarp()` inside [`run_blocks`].
pub(super) fn sync_warp() {
    wait("warp::sync", Wait::Warp);
}

/// A full-warp shuffle inside [`run_blocks`]: every lane offers `word` and receives the word of
/// lane `source(lane)`.
pub(super) fn shuffle(word: u32, source: impl Fn(u32) -> u32) -> u32 {
    exchange("warp shuffles", word, |lane, words| {
        let source = source(lane) as usize;
        words[source]
            .unwrap_or_else(|| panic!("warp shuffle: lane {lane} reads lane {source}, which has returned"))
    })
}

/// A full-warp ballot inside [`run_blocks`]: bit `l` is lane `l`'s `predicate` (0 for a lane
/// that has returned).
pub(super) fn ballot(predicate: bool) -> u32 {
    exchange("warp votes", u32::from(predicate), |_, words| {
        (0..LANES as usize).filter(|&l| words[l].is_some_and(|w| w != 0)).fold(0, |bits, l| bits | 1 << l)
    })
}

/// Every lane of the warp offers `word`; once every lane has, each takes `read` of its lane and
/// all the words; once every lane has read, all go on (so that the next exchange's words
/// overwrite none unread).
fn exchange<R>(name: &str, word: u32, read: impl FnOnce(u32, &[Option<u32>; LANES as usize]) -> R) -> R {
    let linear = CURRENT.get().map_or(0, |r| r.linear_thread());
    let (warp, lane) = (linear / LANES as usize, linear % LANES as usize);
    with_block(name, |block| block.words[warp].borrow_mut()[lane] = Some(word));
    wait(name, Wait::Warp);
    let result = with_block(name, |block| read(lane as u32, &block.words[warp].borrow()));
    wait(name, Wait::Warp);
    result
}

/// Suspends the thread being run until every thread that `until` names has reached it.
fn wait(name: &str, until: Wait) {
    let yielder = YIELDER.get();
    if yielder.is_null() {
        with_block(name, |_| ());
        unreachable!("run_blocks runs every thread as a coroutine");
    }
    let registers = CURRENT.get();
    // SAFETY: set by the coroutine being run, which the yielder belongs to.
    unsafe { &*yielder }.suspend(until);
    // Other threads ran meanwhile: this one's registers and yielder are current again.
    YIELDER.set(yielder);
    CURRENT.set(registers);
}

/// `f` of the block [`run_blocks`] runs; outside it, `name` panics as on the host.
fn with_block<R>(name: &str, f: impl FnOnce(&Block) -> R) -> R {
    let block = BLOCK.get();
    if block.is_null() {
        if active() {
            panic!(
                "gpu_kernels::device::{name} needs the threads of a block at once: run the kernel with emulation::run_blocks"
            )
        }
        super::host_call(name)
    }
    // SAFETY: set by `run_blocks` to its block, which outlives the threads it runs, and cleared
    // when it ends.
    f(unsafe { &*block })
}

/// Every index below `dim`, x fastest.
fn indices([x, y, z]: [u32; 3]) -> impl Iterator<Item = [u32; 3]> {
    (0..z).flat_map(move |k| (0..y).flat_map(move |j| (0..x).map(move |i| [i, j, k])))
}

/// Leaves the emulation when dropped, also when a body panics.
struct Leave;

impl Drop for Leave {
    fn drop(&mut self) {
        CURRENT.set(None);
        YIELDER.set(core::ptr::null());
        BLOCK.set(core::ptr::null());
    }
}

/// What shared memory holds before a block writes it: all bits set, a NaN in every float type.
const POISON: u128 = u128::MAX;

/// The state [`run_blocks`] keeps for the block it runs.
struct Block {
    /// The shared memory, in 16-byte words (aligned as a kernel's vector accesses need), which
    /// the threads read and write through raw pointers.
    shared: Box<[UnsafeCell<u128>]>,
    /// Each warp's words of an exchange, one per lane, `None` once the lane has returned.
    words: Vec<RefCell<[Option<u32>; LANES as usize]>>,
}

impl Block {
    fn new(threads: usize, shared_bytes: usize) -> Self {
        Self {
            shared: (0..shared_bytes.div_ceil(16)).map(|_| UnsafeCell::new(POISON)).collect(),
            words: (0..threads.div_ceil(LANES as usize))
                .map(|_| RefCell::new([None; LANES as usize]))
                .collect(),
        }
    }

    /// Readies the state for the next block: shared memory poisoned, no words offered.
    fn reset(&self) {
        let base = self.shared_base();
        for word in 0..self.shared.len() {
            // SAFETY: in bounds; no thread of a block runs between blocks.
            unsafe { base.add(word).write(POISON) };
        }
        for words in &self.words {
            *words.borrow_mut() = [None; LANES as usize];
        }
    }

    /// The address of the shared memory's first word, through which the threads access it.
    fn shared_base(&self) -> *mut u128 {
        UnsafeCell::raw_get(self.shared.as_ptr())
    }
}

/// A thread of the block being run.
struct Running {
    coroutine: Coroutine<(), Wait, (), DefaultStack>,
    /// Its index in the block, x fastest.
    linear: usize,
    state: State,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Ready,
    Waiting(Wait),
    Returned,
}

/// Runs the threads of one block to their end: each ready thread in turn until it waits or
/// returns, then releases every barrier that all its threads (those that have not returned)
/// wait at; panics if none can be released. The ready threads run in an order shuffled afresh
/// each time (seeded by the block's index, so the same on every run): between two barriers a
/// thread may read what any other thread of the block writes, and a missing barrier shows
/// whichever thread a read depends on.
fn schedule(threads: &mut [Running], block: &Block, block_index: [u32; 3]) {
    let lanes = LANES as usize;
    let [x, y, z] = block_index.map(u64::from);
    let mut order = Shuffle::new(x | y << 21 | z << 42);
    let mut ready: Vec<usize> = Vec::with_capacity(threads.len());
    loop {
        ready.clear();
        ready.extend((0..threads.len()).filter(|&t| threads[t].state == State::Ready));
        order.shuffle(&mut ready);
        for &t in &ready {
            let thread = &mut threads[t];
            thread.state = match thread.coroutine.resume(()) {
                CoroutineResult::Yield(until) => State::Waiting(until),
                CoroutineResult::Return(()) => {
                    block.words[thread.linear / lanes].borrow_mut()[thread.linear % lanes] = None;
                    State::Returned
                }
            };
        }
        let mut released = release(threads, Wait::Block);
        for warp in threads.chunks_mut(lanes) {
            released |= release(warp, Wait::Warp);
        }
        if threads.iter().all(|t| t.state == State::Returned) {
            return;
        }
        if !released {
            let count = |w: Wait| threads.iter().filter(|t| t.state == State::Waiting(w)).count();
            panic!(
                "block {block_index:?}: threads wait at different barriers ({} at sync_threads, {} at a warp \
                 barrier, shuffle or vote), which on the GPU is a barrier in divergent code",
                count(Wait::Block),
                count(Wait::Warp)
            );
        }
    }
}

/// Fisher–Yates shuffles drawn from xorshift64*, a fixed sequence for each seed.
struct Shuffle(u64);

impl Shuffle {
    fn new(seed: u64) -> Self {
        // Any state but zero; the odd constant spreads neighbouring seeds.
        Self(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, (self.next() % (i as u64 + 1)) as usize);
        }
    }
}

/// Makes `threads` ready if all of them that have not returned (one at least) wait at `until`.
fn release(threads: &mut [Running], until: Wait) -> bool {
    let mut live = threads.iter().filter(|t| t.state != State::Returned).peekable();
    if live.peek().is_none() || !live.all(|t| t.state == State::Waiting(until)) {
        return false;
    }
    for thread in threads.iter_mut().filter(|t| t.state != State::Returned) {
        thread.state = State::Ready;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::super::thread::{block_dim_x, block_idx_x, sync_threads, thread_idx_x};
    use super::super::{SharedArray, warp};
    use super::{run, run_blocks};
    use std::sync::atomic::{AtomicU32, Ordering};

    /// One `u32` per thread of a one-dimensional launch, written by the threads.
    struct Output(Vec<AtomicU32>);

    impl Output {
        fn new(len: usize) -> Self {
            Self((0..len).map(|_| AtomicU32::new(u32::MAX)).collect())
        }

        fn set(&self, value: u32) {
            let t = block_idx_x() as usize * block_dim_x() as usize + thread_idx_x() as usize;
            self.0[t].store(value, Ordering::Relaxed);
        }

        fn values(&self) -> Vec<u32> {
            self.0.iter().map(|v| v.load(Ordering::Relaxed)).collect()
        }
    }

    /// The panic message of `f`, which must panic.
    fn panic_message(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
        let payload = std::panic::catch_unwind(f).expect_err("it should panic");
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    }

    #[test]
    fn a_barrier_orders_the_blocks_shared_memory_and_each_block_starts_poisoned() {
        let (blocks, threads) = (3u32, 48u32);
        let (before, after) =
            (Output::new((blocks * threads) as usize), Output::new((blocks * threads) as usize));
        run_blocks((blocks, 1, 1), (threads, 1, 1), threads as usize * 4, || {
            let t = thread_idx_x() as usize;
            // SAFETY: the launch holds one `u32` per thread; the barrier separates the writes
            // from the other threads' reads.
            unsafe {
                let shared = SharedArray::<u32>::at_offset(0);
                before.set(shared.read(t));
                shared.write(t, block_idx_x() * 1000 + t as u32);
                sync_threads();
                after.set(shared.read((t + 1) % threads as usize));
            }
        });
        assert!(before.values().iter().all(|&v| v == u32::MAX), "shared memory starts every block poisoned");
        let expected: Vec<u32> =
            (0..blocks).flat_map(|b| (0..threads).map(move |t| b * 1000 + (t + 1) % threads)).collect();
        assert_eq!(after.values(), expected);
    }

    #[test]
    fn shuffles_and_votes_read_the_lanes_ptx_names() {
        let out: Vec<Output> = (0..7).map(|_| Output::new(64)).collect();
        run_blocks((1, 1, 1), (64, 1, 1), 0, || {
            let lane = thread_idx_x() % warp::LANES;
            let value = 100 * (thread_idx_x() / warp::LANES) + lane;
            out[0].set(warp::from_lane_below(value));
            out[1].set(warp::from_lane_above(value));
            out[2].set(warp::from_lanes_below(value, 5));
            out[3].set(warp::from_lane_xor(value, 6));
            out[4].set(warp::from_lane(value, 37));
            out[5].set(warp::ballot(lane % 3 == 0 || thread_idx_x() == 40));
            warp::sync();
            // An 8-byte value moves as two words.
            out[6].set((warp::from_lane_above(u64::from(value) << 32 | 7) >> 32) as u32);
        });
        let per_lane = |f: &dyn Fn(u32, u32) -> u32| -> Vec<u32> {
            (0..64).map(|t| 100 * (t / 32) + f(t % 32, t / 32)).collect()
        };
        assert_eq!(out[0].values(), per_lane(&|l, _| l.saturating_sub(1)));
        assert_eq!(out[1].values(), per_lane(&|l, _| (l + 1).min(31)));
        assert_eq!(out[2].values(), per_lane(&|l, _| if l >= 5 { l - 5 } else { l }));
        assert_eq!(out[3].values(), per_lane(&|l, _| l ^ 6));
        assert_eq!(out[4].values(), per_lane(&|_, _| 5));
        let thirds = (0..32).filter(|l| l % 3 == 0).fold(0u32, |bits, l| bits | 1 << l);
        let ballots: Vec<u32> = (0..64).map(|t| if t < 32 { thirds } else { thirds | 1 << 8 }).collect();
        assert_eq!(out[5].values(), ballots);
        assert_eq!(out[6].values(), out[1].values());
    }

    #[test]
    fn threads_that_return_hold_up_no_barrier() {
        let out = Output::new(64);
        run_blocks((2, 1, 1), (32, 1, 1), 0, || {
            if thread_idx_x() % 4 != 0 {
                return;
            }
            sync_threads();
            warp::sync();
            sync_threads();
            out.set(1);
        });
        assert_eq!(out.values().iter().filter(|&&v| v == 1).count(), 16);
    }

    #[test]
    fn a_panic_in_one_thread_ends_the_launch_with_its_message() {
        let message = panic_message(|| {
            run_blocks((4, 1, 1), (64, 1, 1), 0, || {
                if block_idx_x() == 1 && thread_idx_x() == 37 {
                    panic!("thread 37 fails");
                }
                sync_threads();
            })
        });
        assert_eq!(message, "thread 37 fails");
    }

    #[test]
    fn a_shuffle_from_a_lane_that_returned_panics() {
        let message = panic_message(|| {
            run_blocks((1, 1, 1), (32, 1, 1), 0, || {
                if thread_idx_x() == 31 {
                    return;
                }
                let _ = warp::from_lane_above(thread_idx_x());
            })
        });
        assert!(message.contains("lane 30 reads lane 31, which has returned"), "{message}");
    }

    /// Warp 0 splits between the block barrier (lane 0) and a warp barrier (the others); warp 1
    /// passes its warp barrier to the block one.
    #[test]
    fn threads_at_different_barriers_are_reported() {
        let message = panic_message(|| {
            run_blocks((2, 1, 1), (64, 1, 1), 0, || {
                if thread_idx_x() == 0 {
                    sync_threads();
                } else {
                    warp::sync();
                    sync_threads();
                }
            })
        });
        assert!(
            message.contains(
                "block [0, 0, 0]: threads wait at different barriers (33 at sync_threads, 31 at a warp"
            ),
            "{message}"
        );
    }

    #[test]
    fn thread_by_thread_a_barrier_names_run_blocks() {
        let message = panic_message(|| run((1, 1, 1), (2, 1, 1), sync_threads));
        assert!(message.contains("emulation::run_blocks"), "{message}");
        assert!(!super::active());
    }
}
