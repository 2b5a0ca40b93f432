//! Tensor copies, Hopper's `cp.async.bulk.tensor`: one instruction brings a box of a 3D array in
//! global memory into shared memory. The host describes the array and the box in a tensor map
//! (`cuTensorMapEncodeTiled`), the copy engine fills the box's elements outside the array with
//! zeros, and a transaction barrier ([`bulk::Barrier`](super::bulk::Barrier)) counts the bytes
//! as they land. In CPU builds the map holds the array's address and shape instead of the
//! driver's encoding, and the copy is a plain one, done at once, so the CPU tests run the
//! kernels that use it.

use super::bulk::Barrier;

/// A tensor map: the 128 bytes, 64-byte aligned, that describe a 3D array and the box a copy
/// brings. On the GPU they are the driver's encoding, in global memory; in CPU builds,
/// [`TensorMap::emulated`]'s.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorMap {
    /// The descriptor's words, opaque on the GPU.
    pub words: [u64; 16],
}

/// Where [`TensorMap::emulated`] keeps each field, in words.
#[cfg(not(target_arch = "nvptx64"))]
mod field {
    pub const BASE: usize = 0;
    pub const ELEMENT_BYTES: usize = 1;
    pub const DIMS: usize = 2;
    pub const BOX: usize = 5;
}

impl TensorMap {
    /// The map of the CPU builds' copy: the array at `base` of `dims` elements (x fastest,
    /// rows and planes packed) and boxes of `box_dims` elements.
    #[cfg(not(target_arch = "nvptx64"))]
    pub fn emulated<T>(base: *const T, dims: [u64; 3], box_dims: [u32; 3]) -> Self {
        let mut words = [0; 16];
        words[field::BASE] = base as u64;
        words[field::ELEMENT_BYTES] = size_of::<T>() as u64;
        words[field::DIMS..field::DIMS + 3].copy_from_slice(&dims);
        for (word, d) in words[field::BOX..field::BOX + 3].iter_mut().zip(box_dims) {
            *word = u64::from(d);
        }
        Self { words }
    }
}

impl Barrier {
    /// Starts the copy of the box of `map` whose first element is at `origin` (x, y, z, in
    /// elements; negative or past the array's end where the box overhangs it) into shared `dst`,
    /// counted by this barrier (`cp.async.bulk.tensor.3d…mbarrier::complete_tx::bytes`).
    ///
    /// # Safety
    /// `map` points to a tensor map in global memory (on the GPU: one the driver encoded, for
    /// an array of `T`); `dst` is 128-byte aligned shared memory holding the box; the barrier is
    /// initialised and the box's bytes are part of the count a later
    /// [`arrive_expecting`](Barrier::arrive_expecting) announces; nothing reads `dst` until the
    /// barrier's phase completes, and nothing writes it while the copy runs.
    #[inline(always)]
    pub unsafe fn copy_box<T>(self, dst: *mut T, map: *const TensorMap, origin: [i32; 3]) {
        #[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))]
        // SAFETY: per the caller.
        unsafe {
            use super::bulk::shared_address;
            core::arch::asm!(
                "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [{d}], [{m}, {{{x}, {y}, {z}}}], [{a}];",
                d = in(reg32) shared_address(dst),
                m = in(reg64) map,
                x = in(reg32) origin[0],
                y = in(reg32) origin[1],
                z = in(reg32) origin[2],
                a = in(reg32) shared_address(self.word()),
                options(nostack, preserves_flags)
            )
        }
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: per the caller and `TensorMap::emulated`'s layout.
        unsafe {
            copy_box_on_the_host(dst.cast(), &*map, origin)
        }
        #[cfg(all(target_arch = "nvptx64", not(target_feature = "sm_90")))]
        {
            let _ = (dst, map, origin);
            super::trap()
        }
    }
}

/// The tensor copy in CPU builds: each element of the box from the array, or zero where the
/// box overhangs it.
///
/// # Safety
/// `map` is [`TensorMap::emulated`]'s for a live array; `dst` holds the box.
#[cfg(not(target_arch = "nvptx64"))]
unsafe fn copy_box_on_the_host(dst: *mut u8, map: &TensorMap, origin: [i32; 3]) {
    let w = &map.words;
    let (base, bytes) = (w[field::BASE] as *const u8, w[field::ELEMENT_BYTES] as usize);
    let dims: [i64; 3] = core::array::from_fn(|a| w[field::DIMS + a] as i64);
    let boxed: [usize; 3] = core::array::from_fn(|a| w[field::BOX + a] as usize);
    let mut at = dst;
    for z in 0..boxed[2] {
        for y in 0..boxed[1] {
            for x in 0..boxed[0] {
                let [gx, gy, gz] = [x, y, z].map(|v| v as i64);
                let [gx, gy, gz] =
                    [gx + i64::from(origin[0]), gy + i64::from(origin[1]), gz + i64::from(origin[2])];
                let inside = [gx, gy, gz].iter().zip(dims).all(|(&g, d)| (0..d).contains(&g));
                // SAFETY: per the caller; an element inside the array lies in it.
                unsafe {
                    if inside {
                        let element = ((gz * dims[1] + gy) * dims[0] + gx) as usize;
                        core::ptr::copy_nonoverlapping(base.add(element * bytes), at, bytes);
                    } else {
                        core::ptr::write_bytes(at, 0, bytes);
                    }
                    at = at.add(bytes);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_box_overhanging_the_array_brings_its_values_and_zeros_beyond() {
        // A 5 × 4 × 3 array whose element (x, y, z) holds 100z + 10y + x + 1 (never 0).
        let dims = [5u64, 4, 3];
        let array: Vec<f64> =
            (0..60).map(|i| f64::from(100 * (i / 20) + 10 * (i / 5 % 4) + i % 5 + 1)).collect();
        let map = TensorMap::emulated(array.as_ptr(), dims, [4, 3, 2]);
        let mut tile = [f64::NAN; 24];
        let mut word = 0u64;
        // SAFETY: the barrier's word is this test's; the tile holds the box.
        unsafe { Barrier::at(&mut word).copy_box(tile.as_mut_ptr(), &map, [-1, 2, 2]) };
        for (n, &value) in tile.iter().enumerate() {
            let (x, y, z) = (n % 4, n / 4 % 3, n / 12);
            let (gx, gy, gz) = (x as i32 - 1, y as i32 + 2, z as i32 + 2);
            let inside = (0..5).contains(&gx) && (0..4).contains(&gy) && (0..3).contains(&gz);
            let expected = if inside { f64::from(100 * gz + 10 * gy + gx + 1) } else { 0.0 };
            assert_eq!(value.to_bits(), expected.to_bits(), "element ({x}, {y}, {z}) of the box");
        }
        // The box's first plane lies in the array's last; its second, past it, is all zeros.
        assert!(tile[12..].iter().all(|&v| v == 0.0));
        assert_eq!(tile[1], 221.0);
    }
}
