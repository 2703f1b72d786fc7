//! C ABI entry points for the local steps of the cosine test and for public constant bits.

use super::with_rt;
use crate::party::Runtime;

#[no_mangle]
pub extern "C" fn irisc_rt_self_dot(rt: *mut Runtime, dst: i32, src: i32) -> i32 {
    with_rt(rt, |r| r.self_dot(dst as u32, src as u32))
}

#[no_mangle]
pub extern "C" fn irisc_rt_const_bits(rt: *mut Runtime, dst: i32, value: i32) -> i32 {
    with_rt(rt, |r| r.const_bits(dst as u32, value != 0))
}
