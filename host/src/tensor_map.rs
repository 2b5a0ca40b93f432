//! Tensor maps for the kernels' tensor copies (`gpu_kernels::device::tensor`): the driver's
//! encoding (`cuTensorMapEncodeTiled`) of a 3D grid in device memory and of the box one copy
//! brings, checked first against the copy engine's limits so that a grid it cannot take is
//! refused with [`Error::BadShape`] before any kernel runs.

use cudarc::driver::sys::{
    self, CUdeviceptr, CUtensorMapDataType, CUtensorMapFloatOOBfill, CUtensorMapInterleave,
    CUtensorMapL2promotion, CUtensorMapSwizzle,
};
use gpu_kernels::device::tensor::TensorMap;

use crate::{Element, Error, Precision, Result};

/// The most elements a box may have along each axis.
pub const MAX_BOX: u32 = 256;
/// What a box's rows and the grid's row and plane strides must be whole multiples of, in bytes.
pub const ALIGN_BYTES: u64 = 16;
/// The most elements the grid may have along each axis.
pub const MAX_DIM: u64 = 1 << 32;

/// Whether the copy engine can bring boxes of `box_dims` elements (x, y, z) of size
/// `element_bytes` from a grid of `dims`: each box side 1 to [`MAX_BOX`], a box row and the
/// grid's rows whole multiples of [`ALIGN_BYTES`] (so planes are too), each side of the grid at
/// most [`MAX_DIM`]. The error names the limit broken.
pub fn check_box(dims: [u64; 3], box_dims: [u32; 3], element_bytes: u64) -> Result<()> {
    let bad = |what: String| Err(Error::BadShape(what));
    if let Some(d) = box_dims.iter().find(|&&d| !(1..=MAX_BOX).contains(&d)) {
        return bad(format!("a tensor copy's box has 1 to {MAX_BOX} elements a side, not {d}"));
    }
    if let Some(d) = dims.iter().find(|&&d| !(1..=MAX_DIM).contains(&d)) {
        return bad(format!("a tensor copy's grid has 1 to {MAX_DIM} elements a side, not {d}"));
    }
    let row = u64::from(box_dims[0]) * element_bytes;
    if !row.is_multiple_of(ALIGN_BYTES) {
        return bad(format!(
            "a tensor copy's box rows are whole multiples of {ALIGN_BYTES} bytes, not {row}"
        ));
    }
    let grid_row = dims[0] * element_bytes;
    if !grid_row.is_multiple_of(ALIGN_BYTES) {
        return bad(format!(
            "tensor copies need rows of a whole multiple of {ALIGN_BYTES} bytes: nx = {} of {element_bytes}-byte elements is {grid_row}",
            dims[0]
        ));
    }
    Ok(())
}

/// The tensor map of the grid of `T` at `pointer` (`dims` elements, x fastest, rows and planes
/// packed) for boxes of `box_dims` elements: elements outside the grid come as zeros, and L2
/// fetches 256 bytes at a time (the prototype's setting, docs/stencil-h200.md).
pub fn encode<T: Element>(pointer: CUdeviceptr, dims: [u64; 3], box_dims: [u32; 3]) -> Result<TensorMap> {
    let bytes = size_of::<T>() as u64;
    check_box(dims, box_dims, bytes)?;
    if !pointer.is_multiple_of(ALIGN_BYTES) {
        return Err(Error::BadArgument(format!("a tensor copy's grid starts {ALIGN_BYTES}-byte aligned")));
    }
    let data_type = match T::PRECISION {
        Precision::F32 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        Precision::F64 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
    };
    let strides = [dims[0] * bytes, dims[0] * dims[1] * bytes];
    let element_strides = [1u32; 3];
    let mut map = sys::CUtensorMap { opaque: [0; 16] };
    // SAFETY: every array is as long as the rank asks (strides: rank − 1), and the limits the
    // driver checks were checked above.
    unsafe {
        sys::cuTensorMapEncodeTiled(
            &mut map,
            data_type,
            3,
            pointer as *mut core::ffi::c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            box_dims.as_ptr(),
            element_strides.as_ptr(),
            CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
            CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
        .result()
    }
    .map_err(|source| Error::Cuda { what: "encoding a tensor map".into(), source })?;
    Ok(TensorMap { words: map.opaque })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_star25_f64_box_fits_and_broken_limits_are_named() {
        // The prototype's four-row f64 box: 72 × 24 × 1 of a 512³ grid.
        assert!(check_box([512; 3], [72, 24, 1], 8).is_ok());
        let message = |r: Result<()>| r.unwrap_err().to_string();
        assert!(message(check_box([512; 3], [264, 24, 1], 8)).contains("1 to 256 elements a side, not 264"));
        assert!(message(check_box([512; 3], [72, 0, 1], 8)).contains("not 0"));
        assert!(message(check_box([512; 3], [70, 24, 1], 4)).contains("not 280"));
        assert!(message(check_box([511, 512, 512], [72, 24, 1], 8)).contains("nx = 511"));
        assert!(message(check_box([0, 512, 512], [72, 24, 1], 8)).contains("not 0"));
        assert!(matches!(check_box([513, 9, 9], [72, 24, 1], 4), Err(Error::BadShape(_))));
    }
}
