//! The command-line tools' NumPy `.npy` files: an input's header is read and checked (its
//! dtype, order, number of dimensions, and that the file holds exactly the data the header
//! announces) before any data is read, so that a wrong or corrupt file is a clear
//! [`Error::BadArgument`] naming the option and the file, never a panic or an absurd
//! allocation. The data itself is read and written by `ndarray-npy`, in either byte order.

use std::fs::File;
use std::io::{BufReader, Seek};
use std::path::{Path, PathBuf};

use ndarray::{Array, ArrayBase, ArrayD, Data, Dimension, IxDyn};
use ndarray_npy::npy::header::Header;
use ndarray_npy::{ReadableElement, WritableElement, write_npy};

use crate::{Error, Result};

/// The element types the tools read from `.npy` files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NpyDtype {
    I32,
    U32,
    I64,
    F32,
    F64,
}

impl NpyDtype {
    pub const ALL: [NpyDtype; 5] =
        [NpyDtype::I32, NpyDtype::U32, NpyDtype::I64, NpyDtype::F32, NpyDtype::F64];

    /// NumPy's name of the type (`int32`, …), for messages.
    pub fn numpy_name(self) -> &'static str {
        match self {
            NpyDtype::I32 => "int32",
            NpyDtype::U32 => "uint32",
            NpyDtype::I64 => "int64",
            NpyDtype::F32 => "float32",
            NpyDtype::F64 => "float64",
        }
    }

    /// The type descriptor's kind and size, without the byte order (`i4`, …).
    fn kind(self) -> &'static str {
        match self {
            NpyDtype::I32 => "i4",
            NpyDtype::U32 => "u4",
            NpyDtype::I64 => "i8",
            NpyDtype::F32 => "f4",
            NpyDtype::F64 => "f8",
        }
    }

    /// Bytes of one element.
    pub fn bytes(self) -> u64 {
        match self {
            NpyDtype::I32 | NpyDtype::U32 | NpyDtype::F32 => 4,
            NpyDtype::I64 | NpyDtype::F64 => 8,
        }
    }

    /// The type of a `.npy` type descriptor: little- (`<`) or big-endian (`>`), as `ndarray-npy`
    /// reads both; `None` for any other type, or a descriptor without a byte order.
    pub fn from_descriptor(descriptor: &str) -> Option<NpyDtype> {
        let kind = descriptor.strip_prefix(['<', '>'])?;
        NpyDtype::ALL.into_iter().find(|dtype| dtype.kind() == kind)
    }
}

/// The dimensions an input must have: how many, and what they mean (for messages).
#[derive(Clone, Copy, Debug)]
pub struct Dims {
    pub count: usize,
    /// e.g. `(nz, ny, nx)` or `1-D keys`.
    pub meaning: &'static str,
}

/// An input `.npy` file whose header has been read and checked, its data not yet read.
pub struct NpyInput {
    /// The command-line option that named the file (`--input`, …), for messages.
    option: &'static str,
    path: PathBuf,
    header: Header,
    reader: BufReader<File>,
    dtype: NpyDtype,
}

impl NpyInput {
    /// Opens the `.npy` file at `path`, named by `option`, and checks that its dtype is one of
    /// `accepted`, that it is in C order (for more than one dimension), that it has `dims`
    /// dimensions, and that it holds exactly the bytes its shape and dtype need.
    pub fn open(option: &'static str, path: &Path, accepted: &[NpyDtype], dims: Dims) -> Result<NpyInput> {
        let bad = |why: String| bad(option, path, why);
        let file = File::open(path).map_err(|e| bad(format!("cannot open it: {e}")))?;
        let file_len = file.metadata().map_err(|e| bad(format!("cannot read it: {e}")))?.len();
        let mut reader = BufReader::new(file);
        let header =
            Header::from_reader(&mut reader).map_err(|e| bad(format!("not a NumPy .npy file ({e})")))?;
        let descriptor = header.type_descriptor.as_string().map(String::as_str).unwrap_or("");
        let dtype = NpyDtype::from_descriptor(descriptor)
            .filter(|dtype| accepted.contains(dtype))
            .ok_or_else(|| {
                let expected: Vec<String> = accepted
                    .iter()
                    .map(|dtype| format!("{} ('<{}')", dtype.numpy_name(), dtype.kind()))
                    .collect();
                bad(format!("its dtype is {}, expected {}", header.type_descriptor, or_list(&expected)))
            })?;
        if header.shape.len() != dims.count {
            return Err(bad(format!(
                "its shape {:?} has {} dimensions, expected {}: {}",
                header.shape,
                header.shape.len(),
                dims.count,
                dims.meaning
            )));
        }
        if dims.count > 1 && header.layout.is_fortran() {
            return Err(bad("it is in Fortran order; save it in C order (np.ascontiguousarray)".into()));
        }
        // Checked before reading, so that a corrupt header cannot ask for an absurd allocation.
        let needed = header.shape.iter().map(|&n| n as u128).product::<u128>() * u128::from(dtype.bytes());
        let data_bytes = reader.stream_position().map(|at| file_len.saturating_sub(at)).unwrap_or(0);
        if u128::from(data_bytes) != needed {
            return Err(bad(format!(
                "it holds {data_bytes} bytes of data, but its shape {:?} of {} needs {needed}",
                header.shape,
                dtype.numpy_name()
            )));
        }
        Ok(NpyInput { option, path: path.to_owned(), header, reader, dtype })
    }

    /// The file's element type.
    pub fn dtype(&self) -> NpyDtype {
        self.dtype
    }

    /// The file's shape, C order (checked against the data's length by [`NpyInput::open`]).
    pub fn shape(&self) -> &[usize] {
        &self.header.shape
    }

    /// The path, as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A [`Error::BadArgument`] about this file: `<option> <path>: <why>`.
    pub fn bad(&self, why: String) -> Error {
        bad(self.option, &self.path, why)
    }

    /// The data, in C order, as `T` (which must be the file's [`NpyInput::dtype`]).
    pub fn read<T: ReadableElement>(self) -> Result<Vec<T>> {
        let len = self.header.shape.iter().product();
        T::read_to_end_exact_vec(self.reader, &self.header.type_descriptor, len)
            .map_err(|e| bad(self.option, &self.path, format!("cannot read its data ({e})")))
    }

    /// The data as an array of the file's shape (`D` of the dimensions [`NpyInput::open`]
    /// checked).
    pub fn read_array<T: ReadableElement, D: Dimension>(self) -> Result<Array<T, D>> {
        let shape = IxDyn(self.shape());
        let (option, path) = (self.option, self.path.clone());
        ArrayD::from_shape_vec(shape, self.read()?)
            .and_then(|array| array.into_dimensionality())
            .map_err(|e| bad(option, &path, format!("its data do not make an array of its shape ({e})")))
    }
}

/// Writes `array` to the `.npy` file at `path`, for `--output`.
pub fn write_output<T, S, D>(path: &Path, array: &ArrayBase<S, D>) -> Result<()>
where
    T: WritableElement,
    S: Data<Elem = T>,
    D: Dimension,
{
    write_npy(path, array)
        .map_err(|e| Error::BadArgument(format!("--output {}: cannot write it ({e})", path.display())))
}

fn bad(option: &str, path: &Path, why: String) -> Error {
    Error::BadArgument(format!("{option} {}: {why}", path.display()))
}

/// `a`, `a or b`, `a, b or c`.
fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Array1, Array3, Ix3, ShapeBuilder};

    const KEYS: Dims = Dims { count: 1, meaning: "1-D keys" };
    const GRID: Dims = Dims { count: 3, meaning: "(nz, ny, nx)" };

    #[test]
    fn type_descriptors_in_either_byte_order() {
        for dtype in NpyDtype::ALL {
            assert_eq!(NpyDtype::from_descriptor(&format!("<{}", dtype.kind())), Some(dtype));
            assert_eq!(NpyDtype::from_descriptor(&format!(">{}", dtype.kind())), Some(dtype));
        }
        for other in ["<u8", "<f2", "|u1", "i4", "=f4", "<c8", ""] {
            assert_eq!(NpyDtype::from_descriptor(other), None, "{other}");
        }
    }

    #[test]
    fn written_files_read_back() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("grid.npy");
        let grid = Array3::from_shape_fn((3, 4, 5), |(z, y, x)| (z * 100 + y * 10 + x) as f64 - 0.5);
        write_output(&path, &grid).unwrap();
        let input = NpyInput::open("--input", &path, &[NpyDtype::F32, NpyDtype::F64], GRID).unwrap();
        assert_eq!((input.dtype(), input.shape()), (NpyDtype::F64, &[3, 4, 5][..]));
        assert_eq!(input.read_array::<f64, Ix3>().unwrap(), grid);
        let err =
            write_output(&tmp.path().join("no/such/dir/c.npy"), &Array1::from_vec(vec![1i32])).unwrap_err();
        assert!(err.to_string().contains("--output") && err.to_string().contains("cannot write it"), "{err}");
    }

    /// A file with a big-endian descriptor and its data byte-swapped reads as the same values.
    #[test]
    fn big_endian_files_read_the_same_values() {
        let tmp = tempfile::tempdir().unwrap();
        let little = tmp.path().join("little.npy");
        let keys = vec![1i32, -2, 70_000];
        write_output(&little, &Array1::from_vec(keys.clone())).unwrap();
        let mut bytes = std::fs::read(&little).unwrap();
        let at = bytes.windows(5).position(|w| w == b"'<i4'").unwrap();
        bytes[at + 1] = b'>';
        let data = bytes.len() - 4 * keys.len();
        bytes[data..].chunks_mut(4).for_each(<[u8]>::reverse);
        let big = tmp.path().join("big.npy");
        std::fs::write(&big, bytes).unwrap();
        let input = NpyInput::open("--input-a", &big, &NpyDtype::ALL, KEYS).unwrap();
        assert_eq!(input.dtype(), NpyDtype::I32);
        assert_eq!(input.read::<i32>().unwrap(), keys);
    }

    #[test]
    fn bad_files_are_errors_naming_option_file_and_reason() {
        let tmp = tempfile::tempdir().unwrap();
        let file = |name: &str| tmp.path().join(name);
        write_output(&file("i16.npy"), &Array1::from_vec(vec![1i16, 2])).unwrap();
        write_output(&file("2d.npy"), &ndarray::Array2::<f32>::zeros((2, 3))).unwrap();
        write_output(&file("0d.npy"), &ndarray::arr0(5i32)).unwrap();
        write_output(&file("fortran.npy"), &Array3::<f32>::zeros((3, 4, 5).f())).unwrap();
        std::fs::write(file("text.npy"), "not numpy").unwrap();
        write_output(&file("short.npy"), &Array3::<f32>::zeros((4, 4, 4))).unwrap();
        let bytes = std::fs::read(file("short.npy")).unwrap();
        std::fs::write(file("short.npy"), &bytes[..bytes.len() - 4]).unwrap();
        write_output(&file("long.npy"), &Array1::from_vec(vec![1i64; 3])).unwrap();
        let mut bytes = std::fs::read(file("long.npy")).unwrap();
        bytes.push(0);
        std::fs::write(file("long.npy"), bytes).unwrap();
        let floats = [NpyDtype::F32, NpyDtype::F64];
        for (name, accepted, dims, reason) in [
            ("missing.npy", &floats[..], GRID, "cannot open it"),
            ("i16.npy", &NpyDtype::ALL[..], KEYS, "its dtype is '<i2', expected int32 ('<i4'), uint32"),
            ("0d.npy", &floats[..], GRID, "its dtype is '<i4', expected float32 ('<f4') or float64 ('<f8')"),
            ("2d.npy", &floats[..], GRID, "has 2 dimensions, expected 3: (nz, ny, nx)"),
            ("0d.npy", &NpyDtype::ALL[..], KEYS, "has 0 dimensions, expected 1: 1-D keys"),
            ("fortran.npy", &floats[..], GRID, "Fortran order"),
            ("text.npy", &floats[..], GRID, "not a NumPy .npy file"),
            (
                "short.npy",
                &floats[..],
                GRID,
                "252 bytes of data, but its shape [4, 4, 4] of float32 needs 256",
            ),
            ("long.npy", &NpyDtype::ALL[..], KEYS, "25 bytes of data, but its shape [3] of int64 needs 24"),
        ] {
            let Err(err) = NpyInput::open("--input", &file(name), accepted, dims) else {
                panic!("{name} was accepted");
            };
            let text = err.to_string();
            assert!(matches!(err, Error::BadArgument(_)), "{name}: {text}");
            assert!(
                text.contains(reason)
                    && text.contains("--input")
                    && text.contains(name)
                    && !text.contains('\n'),
                "{name}: {text}"
            );
        }
    }

    #[test]
    fn lists_read_as_english() {
        let list = |items: &[&str]| or_list(&items.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(list(&["a"]), "a");
        assert_eq!(list(&["a", "b"]), "a or b");
        assert_eq!(list(&["a", "b", "c"]), "a, b or c");
    }
}
