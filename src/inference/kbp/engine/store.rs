//! Kernel BP's message store: every message's coefficients in f32, read into f64 before any
//! arithmetic and rounded once when written back. A unit-norm coefficient vector keeps 7
//! significant digits, far below what changes an estimate, and the store is half the size:
//! the largest array of a photograph's run (4 slots x feature rank per pixel). Memory
//! `slots · dim · 4` bytes.
//!
//! [`SharedStore`] and [`SharedRecord`] let the in-place schedules (the wavefront sweep, the
//! checkerboard) update pixels in parallel: pixels updated at once are never neighbours, so
//! each writes only its own slots and reads only its neighbours', which nobody writes meanwhile.

/// Reads slot `s` of a store into `out` as f64.
#[inline]
pub(super) fn read(store: &[f32], dim: usize, s: usize, out: &mut [f64]) {
    for (o, v) in out.iter_mut().zip(&store[s * dim..(s + 1) * dim]) {
        *o = f64::from(*v);
    }
}

/// Writes `values` (rounded to f32) into slot `s`.
#[inline]
pub(super) fn write(store: &mut [f32], dim: usize, s: usize, values: &[f64]) {
    for (o, v) in store[s * dim..(s + 1) * dim].iter_mut().zip(values) {
        *o = *v as f32;
    }
}

/// A store that parallel tasks read and write through disjoint slots (see the module doc).
pub(super) struct SharedStore {
    ptr: *mut f32,
    len: usize,
    dim: usize,
}

// SAFETY: the store is only reached through `read`/`write`, whose callers guarantee that no
// slot is written by one task while another reads or writes it.
unsafe impl Send for SharedStore {}
unsafe impl Sync for SharedStore {}

impl SharedStore {
    pub(super) fn new(store: &mut [f32], dim: usize) -> Self {
        SharedStore {
            ptr: store.as_mut_ptr(),
            len: store.len(),
            dim,
        }
    }

    /// Asks the processor to bring the slots `first..first + count` into cache ahead of use: a
    /// wavefront visits the pixels of an anti-diagonal, one per row, an order the hardware's
    /// own prefetcher cannot follow. Only a hint (nothing is read or written).
    #[inline]
    pub(super) fn prefetch(&self, first: usize, count: usize) {
        let start = (first * self.dim).min(self.len);
        let end = ((first + count) * self.dim).min(self.len);
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            // 16 f32 = one 64-byte cache line.
            for i in (start..end).step_by(16) {
                // SAFETY: a prefetch has no effect on memory and cannot fault; the address is
                // inside the store anyway (clamped above).
                unsafe { _mm_prefetch::<_MM_HINT_T0>(self.ptr.add(i).cast::<i8>()) };
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (start, end);
    }

    /// Slot `s` as f64 into `out`.
    ///
    /// # Safety
    /// No task writes slot `s` while this runs.
    #[inline]
    pub(super) unsafe fn read(&self, s: usize, out: &mut [f64]) {
        assert!((s + 1) * self.dim <= self.len, "slot {s} out of range");
        // SAFETY: in bounds (checked); no concurrent writer (the caller's contract).
        let slot = unsafe { std::slice::from_raw_parts(self.ptr.add(s * self.dim), self.dim) };
        for (o, v) in out.iter_mut().zip(slot) {
            *o = f64::from(*v);
        }
    }

    /// Writes `values` into slot `s`.
    ///
    /// # Safety
    /// No other task reads or writes slot `s` while this runs.
    #[inline]
    pub(super) unsafe fn write(&self, s: usize, values: &[f64]) {
        assert!((s + 1) * self.dim <= self.len, "slot {s} out of range");
        // SAFETY: in bounds (checked); exclusive for the call (the caller's contract).
        let slot = unsafe { std::slice::from_raw_parts_mut(self.ptr.add(s * self.dim), self.dim) };
        for (o, v) in slot.iter_mut().zip(values) {
            *o = *v as f32;
        }
    }
}

/// A per-slot f32 record that parallel tasks add to through disjoint slots.
pub(super) struct SharedRecord {
    ptr: *mut f32,
    len: usize,
}

// SAFETY: reached only through `add`, whose callers touch disjoint slots concurrently.
unsafe impl Send for SharedRecord {}
unsafe impl Sync for SharedRecord {}

impl SharedRecord {
    pub(super) fn new(record: &mut [f32]) -> Self {
        SharedRecord {
            ptr: record.as_mut_ptr(),
            len: record.len(),
        }
    }

    /// Adds `value` to slot `s`.
    ///
    /// # Safety
    /// No other task touches slot `s` while this runs.
    pub(super) unsafe fn add(&self, s: usize, value: f64) {
        assert!(s < self.len, "slot {s} out of range");
        // SAFETY: in bounds (checked); exclusive for the call (the caller's contract).
        unsafe { *self.ptr.add(s) += value as f32 };
    }
}
