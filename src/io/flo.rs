//! Middlebury `.flo` optical-flow files (Baker et al., IJCV 2011), read and written.
//!
//! Layout, little endian: the tag `"PIEH"` (the float32 202021.25), int32 width, int32 height,
//! then `width * height * 2` float32 values, row-major and interleaved `(u, v)`: `u` points right
//! (+x), `v` down (+y), in pixels. A component with magnitude above 1e9 means "unknown" (no
//! ground truth there); [`FlowField::is_known`] says which pixels count in a metric.
//!
//! The reader checks the tag, that both sides are in `1..=MAX_IMAGE_SIDE` and that the file is
//! exactly `12 + 8 w h` bytes long *before* allocating the field, so a corrupt header never asks
//! for gigabytes and a truncated file is an error, not a short field. Cost O(w h).

use std::io::Read;
use std::path::Path;

use crate::error::{Error, Result};
use crate::io::image_file::MAX_IMAGE_SIDE;
use crate::io::write_atomic;

/// The four tag bytes: `"PIEH"`, which read as a little-endian float32 is 202021.25.
pub const FLO_TAG: [u8; 4] = *b"PIEH";
/// The tag as a number (a sanity check on byte order).
pub const FLO_TAG_FLOAT: f32 = 202_021.25;
/// A component with magnitude above this is "unknown".
pub const UNKNOWN_THRESHOLD: f64 = 1e9;
/// What [`write_flo`] writes for an unknown component (Middlebury's convention).
pub const UNKNOWN_VALUE: f32 = 1e10;
/// Header bytes: tag, width, height.
pub const HEADER_BYTES: usize = 12;

/// A dense flow field: `u[i]`, `v[i]` at pixel `i = y * width + x`, in pixels, forward (frame 1
/// to frame 2). Unknown components are kept as read (magnitude above 1e9, or non-finite).
#[derive(Debug, Clone, PartialEq)]
pub struct FlowField {
    pub width: usize,
    pub height: usize,
    pub u: Vec<f64>,
    pub v: Vec<f64>,
}

impl FlowField {
    /// A zero field.
    pub fn zeros(width: usize, height: usize) -> Self {
        FlowField {
            width,
            height,
            u: vec![0.0; width * height],
            v: vec![0.0; width * height],
        }
    }

    /// A field from its components (errors if the lengths are not `width * height`).
    pub fn new(width: usize, height: usize, u: Vec<f64>, v: Vec<f64>) -> Result<Self> {
        let n = width * height;
        if u.len() != n || v.len() != n {
            return Err(Error::param(
                "flow field",
                format!(
                    "{width} x {height} needs {n} values per component, got {} and {}",
                    u.len(),
                    v.len()
                ),
            ));
        }
        Ok(FlowField {
            width,
            height,
            u,
            v,
        })
    }

    pub fn len(&self) -> usize {
        self.u.len()
    }

    pub fn is_empty(&self) -> bool {
        self.u.is_empty()
    }

    /// True when both components of pixel `i` are finite and at most 1e9 in magnitude.
    pub fn is_known(&self, i: usize) -> bool {
        component_known(self.u[i]) && component_known(self.v[i])
    }

    /// Number of pixels without ground truth.
    pub fn unknown_count(&self) -> usize {
        (0..self.len()).filter(|&i| !self.is_known(i)).count()
    }

    /// The largest speed `sqrt(u² + v²)` over the known pixels (0 if none).
    pub fn max_speed(&self) -> f64 {
        (0..self.len())
            .filter(|&i| self.is_known(i))
            .map(|i| self.u[i].hypot(self.v[i]))
            .fold(0.0, f64::max)
    }

    /// Errors unless the field is `width x height`, naming both sizes (a ground truth that does
    /// not belong to the frames).
    pub fn check_size(&self, width: usize, height: usize, what: &str) -> Result<()> {
        if self.width != width || self.height != height {
            return Err(Error::Io(format!(
                "{what} is {} x {} but the frames are {width} x {height}",
                self.width, self.height
            )));
        }
        Ok(())
    }
}

/// True for a finite component of magnitude at most 1e9.
pub fn component_known(c: f64) -> bool {
    c.is_finite() && c.abs() <= UNKNOWN_THRESHOLD
}

/// Checks a header and returns `(width, height)`; `available` is the number of bytes after the
/// header (checked against `8 w h` without allocating anything).
fn parse_header(header: &[u8; HEADER_BYTES], available: u64, name: &str) -> Result<(usize, usize)> {
    let bad = |reason: String| Error::Io(format!("{name}: not a valid .flo file: {reason}"));
    if header[0..4] != FLO_TAG {
        let as_float = f32::from_le_bytes([header[0], header[1], header[2], header[3]]);
        return Err(bad(format!(
            "wrong tag {:?} (float {as_float}); a .flo file starts with \"PIEH\" (float {FLO_TAG_FLOAT})",
            String::from_utf8_lossy(&header[0..4])
        )));
    }
    let w = i32::from_le_bytes([header[4], header[5], header[6], header[7]]);
    let h = i32::from_le_bytes([header[8], header[9], header[10], header[11]]);
    let max = MAX_IMAGE_SIDE as i32;
    if !(1..=max).contains(&w) || !(1..=max).contains(&h) {
        return Err(bad(format!(
            "size {w} x {h} is out of range (each side must be 1..={max})"
        )));
    }
    let (w, h) = (w as usize, h as usize);
    let needed = 8 * (w as u64) * (h as u64);
    if available < needed {
        return Err(bad(format!(
            "truncated: {w} x {h} needs {needed} bytes of flow after the header, found {available}"
        )));
    }
    if available > needed {
        return Err(bad(format!(
            "{} unexpected bytes after the {w} x {h} flow",
            available - needed
        )));
    }
    Ok((w, h))
}

fn decode_body(w: usize, h: usize, body: &[u8]) -> FlowField {
    let n = w * h;
    let mut u = Vec::with_capacity(n);
    let mut v = Vec::with_capacity(n);
    for px in body.chunks_exact(8) {
        u.push(f32::from_le_bytes([px[0], px[1], px[2], px[3]]) as f64);
        v.push(f32::from_le_bytes([px[4], px[5], px[6], px[7]]) as f64);
    }
    FlowField {
        width: w,
        height: h,
        u,
        v,
    }
}

/// Parses a `.flo` file held in memory. Errors on a wrong tag, an out-of-range size, a truncated
/// body or trailing bytes.
pub fn parse_flo(bytes: &[u8]) -> Result<FlowField> {
    let name = "flow data";
    if bytes.len() < HEADER_BYTES {
        return Err(Error::Io(format!(
            "{name}: not a valid .flo file: {} bytes, shorter than the 12-byte header",
            bytes.len()
        )));
    }
    let header: [u8; HEADER_BYTES] = bytes[..HEADER_BYTES].try_into().expect("12 bytes");
    let body = &bytes[HEADER_BYTES..];
    let (w, h) = parse_header(&header, body.len() as u64, name)?;
    Ok(decode_body(w, h, body))
}

/// Reads a `.flo` file. The header and the file length are checked before the body is read or
/// any buffer for it allocated.
pub fn read_flo(path: &Path) -> Result<FlowField> {
    let name = path.display().to_string();
    let io_err = |e: std::io::Error| Error::Io(format!("cannot read {name}: {e}"));
    let mut file = std::fs::File::open(path).map_err(io_err)?;
    let len = file.metadata().map_err(io_err)?.len();
    if len < HEADER_BYTES as u64 {
        return Err(Error::Io(format!(
            "{name}: not a valid .flo file: {len} bytes, shorter than the 12-byte header"
        )));
    }
    let mut header = [0u8; HEADER_BYTES];
    file.read_exact(&mut header).map_err(io_err)?;
    let (w, h) = parse_header(&header, len - HEADER_BYTES as u64, &name)?;
    let mut body = vec![0u8; 8 * w * h];
    file.read_exact(&mut body).map_err(|e| {
        Error::Io(format!(
            "{name}: not a valid .flo file: truncated while reading ({e})"
        ))
    })?;
    Ok(decode_body(w, h, &body))
}

/// The bytes of a `.flo` file for `flow`. Unknown components (magnitude above 1e9 or not
/// finite) are written as 1e10.
pub fn encode_flo(flow: &FlowField) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_BYTES + 8 * flow.len());
    out.extend_from_slice(&FLO_TAG);
    out.extend_from_slice(&(flow.width as i32).to_le_bytes());
    out.extend_from_slice(&(flow.height as i32).to_le_bytes());
    let enc = |c: f64| {
        if component_known(c) {
            c as f32
        } else {
            UNKNOWN_VALUE
        }
    };
    for (&u, &v) in flow.u.iter().zip(&flow.v) {
        out.extend_from_slice(&enc(u).to_le_bytes());
        out.extend_from_slice(&enc(v).to_le_bytes());
    }
    out
}

/// Writes `flow` as a `.flo` file (atomically: a temporary file, then a rename).
pub fn write_flo(path: &Path, flow: &FlowField) -> Result<()> {
    let max = MAX_IMAGE_SIDE as usize;
    if !(1..=max).contains(&flow.width) || !(1..=max).contains(&flow.height) {
        return Err(Error::param(
            "flow field",
            format!(
                "{} x {} cannot be written (each side must be 1..={max})",
                flow.width, flow.height
            ),
        ));
    }
    write_atomic(path, &encode_flo(flow))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_is_the_documented_float() {
        assert_eq!(f32::from_le_bytes(FLO_TAG), FLO_TAG_FLOAT);
    }

    #[test]
    fn bytes_round_trip() {
        let f = FlowField::new(3, 2, vec![0.5, -1.0, 2.25, 0.0, 1e10, 3.0], vec![0.0; 6]).unwrap();
        let back = parse_flo(&encode_flo(&f)).unwrap();
        assert_eq!(back.width, 3);
        assert_eq!(back.u[2], 2.25);
        assert!(!back.is_known(4));
        assert_eq!(back.unknown_count(), 1);
    }
}
