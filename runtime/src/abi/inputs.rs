//! C ABI entry points that load inputs and report outputs (manifest v2: any number of named
//! inputs of any kind, named output fields).

use crate::error::RuntimeError;
use crate::party::Runtime;

use super::with_rt;

/// Part `part` (0 codes, 1 secret masks, 2 embedding, 3 bit) of input `input` (index in the
/// manifest's inputs) for query `query` (-1 for a gallery) into slot `dst`, rep3 shares reduced
/// locally mod 2^`ring_bits`: `Codes` (or Shamir codes) for parts 0-2, `Bits` for part 3.
#[no_mangle]
pub extern "C" fn irisc_rt_load_input(
    rt: *mut Runtime,
    dst: i32,
    input: i32,
    part: i32,
    query: i64,
    ring_bits: i32,
) -> i32 {
    with_rt(rt, |r| {
        r.announce_query(query);
        let v = r.inputs.load_input(input, part, query, ring_bits)?;
        r.put(slot(dst)?, v);
        Ok(())
    })
}

/// The queries `0..query` of query input `input`, in gallery form (ids = query indices), into
/// slot `dst`; empty for query 0 (`earlier(q)`).
#[no_mangle]
pub extern "C" fn irisc_rt_load_earlier(
    rt: *mut Runtime,
    dst: i32,
    input: i32,
    part: i32,
    query: i64,
    ring_bits: i32,
) -> i32 {
    with_rt(rt, |r| {
        let v = r.inputs.load_earlier(input, part, query, ring_bits)?;
        r.put(slot(dst)?, v);
        Ok(())
    })
}

/// Adds one reveal's field to query `query`'s answer (output party): `shape` 0 bit (`src` one
/// opened bit), 1 ids (`src` one opened bit per record of slot `records`, whose ids are
/// reported; `records` < 0: the only gallery), 2 count (`src` one opened integer). `field`
/// (`field_len` bytes of UTF-8) names the JSON field; null or empty takes the shape's default.
///
/// # Safety
/// `field` must be null or point to `field_len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn irisc_rt_output(
    rt: *mut Runtime,
    query: i64,
    src: i32,
    records: i32,
    shape: i32,
    field: *const u8,
    field_len: i64,
) -> i32 {
    let name: Result<Option<String>, RuntimeError> = if field.is_null() || field_len <= 0 {
        Ok(None)
    } else {
        // SAFETY: forwarded from this function's contract.
        let bytes = unsafe { std::slice::from_raw_parts(field, field_len as usize) };
        std::str::from_utf8(bytes)
            .map(|s| Some(s.to_string()))
            .map_err(|_| RuntimeError::Schedule("output field name is not UTF-8".into()))
    };
    with_rt(rt, |r| {
        let name = name?;
        let q = u64::try_from(query)
            .map_err(|_| RuntimeError::Schedule(format!("output for query {query}")))?;
        r.output(q, slot(src)?, records, shape, name.as_deref())
    })
}

/// Prints query `query`'s answer line `{"query": i, <fields>}` at the output party.
#[no_mangle]
pub extern "C" fn irisc_rt_emit(rt: *mut Runtime, query: i64) -> i32 {
    with_rt(rt, |r| {
        let q = u64::try_from(query)
            .map_err(|_| RuntimeError::Schedule(format!("emit for query {query}")))?;
        r.emit(q)
    })
}

fn slot(i: i32) -> Result<u32, RuntimeError> {
    u32::try_from(i).map_err(|_| RuntimeError::Schedule(format!("negative slot {i}")))
}
