//! Runtime calls for the ops of the `mpc` module: one `irisc_rt_*` entry point per op, its
//! arguments read from the op's operands (slots), attributes and ring types; the dot-product ops
//! pass the kernel table generated for their ring and length ([`kernel`]).

use super::{err, key, slots::Slot, Schedule};
use crate::analysis::threshold_placement::{mask_holders_of, threshold_placement_of};
use crate::codegen::{cpu::kernel, CodegenError};
use crate::mlir::{get_int, get_str, op_name, type_name, type_param};
use inkwell::{
    module::Linkage,
    values::{BasicMetadataValueEnum, IntValue},
    AddressSpace,
};
use irisc_runtime::contract::{BatchDotKind, OutputShape};
use melior::ir::{operation::OperationLike, OperationRef, ValueLike};

impl<'ctx> Schedule<'ctx, '_> {
    /// The ring of operand `i` (or of the result with `None`), from its type `!mpc.X<k>`.
    pub(super) fn ring<'c: 'a, 'a>(
        &self,
        op: &impl OperationLike<'c, 'a>,
        operand: Option<usize>,
    ) -> Result<u32, CodegenError> {
        let t = match operand {
            Some(i) => op.operand(i).map_err(err)?.r#type(),
            None => op.result(0).map_err(err)?.r#type(),
        };
        type_param(t)
            .and_then(|k| u32::try_from(k).ok())
            .filter(|k| (2..=64).contains(k))
            .ok_or_else(|| {
                err(format!(
                    "`{}` has no ring of 2..=64 bits in its type `{t}`",
                    op_name(op)
                ))
            })
    }

    /// The ring a load passes to the runtime: k of `!mpc.code<k>`, 16 for Shamir shares (their
    /// elements are 16-bit), 1 for bits.
    pub(super) fn load_ring<'c: 'a, 'a>(
        &self,
        op: &impl OperationLike<'c, 'a>,
    ) -> Result<i64, CodegenError> {
        let t = op.result(0).map_err(err)?.r#type();
        Ok(match type_name(t).as_str() {
            "mpc.code" => self.ring(op, None)?.into(),
            "mpc.shamir" => 16,
            _ => 1,
        })
    }

    /// A pointer to the bytes of `s` as a private constant (output labels).
    pub(super) fn string_ptr(&mut self, s: &str) -> BasicMetadataValueEnum<'ctx> {
        self.bytes_ptr(s.as_bytes())
    }

    /// A pointer to `data` as a private constant (labels, the `beaver` circuit).
    pub(super) fn bytes_ptr(&mut self, data: &[u8]) -> BasicMetadataValueEnum<'ctx> {
        let bytes = self.cx.const_string(data, false);
        let g = self
            .module
            .add_global(bytes.get_type(), None, "irisc_label");
        g.set_initializer(&bytes);
        g.set_constant(true);
        g.set_linkage(Linkage::Private);
        g.as_pointer_value().into()
    }

    pub(super) fn op<'c: 'a, 'a>(
        &mut self,
        name: &str,
        op: &impl OperationLike<'c, 'a>,
        query: Option<IntValue<'ctx>>,
    ) -> Result<(), CodegenError> {
        let rt = self.rt.into();
        let int = |a: &str| get_int(op, a).map_err(err);
        let q = || query.ok_or_else(|| err(format!("`{name}` outside @query")));
        let ring_out = || self.ring(op, None).map(|k| self.i32c(k.into()));
        let ring_in = || self.ring(op, Some(0)).map(|k| self.i32c(k.into()));
        let (callee, args): (&str, Vec<BasicMetadataValueEnum>) = match name {
            "mpc.load_gallery" => {
                let ring = self.i32c(self.load_ring(op)?);
                self.note_len(int("input")?);
                let (input, part) = (self.i32c(int("input")?), self.i32c(int("part")?));
                let dst = self.fresh(op)?;
                (
                    "irisc_rt_load_input",
                    vec![rt, dst, input, part, self.i64c(-1), ring],
                )
            }
            "mpc.load_query" | "mpc.load_earlier" => {
                let ring = self.i32c(self.load_ring(op)?);
                self.note_len(int("input")?);
                let (input, part) = (self.i32c(int("input")?), self.i32c(int("part")?));
                let dst = self.fresh(op)?;
                let callee = if name == "mpc.load_query" {
                    "irisc_rt_load_input"
                } else {
                    "irisc_rt_load_earlier"
                };
                (callee, vec![rt, dst, input, part, q()?.into(), ring])
            }
            "mpc.rotate" => {
                if let Some(len) = self.slot_len(op, 0) {
                    self.lens.insert(self.next_slot, len);
                }
                let src = self.slot_arg(op, 0)?;
                let (lo, hi) = (self.i32c(int("lo")?), self.i32c(int("hi")?));
                // Absent: not mirrored.
                let mirror = self.i32c(get_int(op, "mirror").unwrap_or(0));
                (
                    "irisc_rt_rotate",
                    vec![rt, self.fresh(op)?, src, lo, hi, mirror],
                )
            }
            "mpc.masked_dot" => {
                let (kptr, _) = self.dot_table(name, op)?;
                let (codes, gallery) = (self.slot_arg(op, 0)?, self.slot_arg(op, 1)?);
                (
                    "irisc_rt_masked_dot",
                    vec![rt, self.fresh(op)?, codes, gallery, kptr],
                )
            }
            "mpc.reshare" => {
                let (src, k) = (self.slot_arg(op, 0)?, ring_out()?);
                ("irisc_rt_reshare", vec![rt, self.fresh(op)?, src, k])
            }
            "mpc.sub_threshold" | "mpc.sub_threshold_p" => {
                let (dot, ml) = (self.slot_arg(op, 0)?, self.slot_arg(op, 1)?);
                let (num, den) = (self.i64c(int("ratio_num")?), self.i64c(int("ratio_den")?));
                let placement = threshold_placement_of(op).map_err(err)?;
                let placement = self.i32c(placement as i64);
                let dst = self.fresh(op)?;
                if name == "mpc.sub_threshold" {
                    let k = self.i32c(self.ring(op, None)?.into());
                    (
                        "irisc_rt_sub_threshold",
                        vec![rt, dst, dot, ml, num, den, k, placement],
                    )
                } else {
                    (
                        "irisc_rt_sub_threshold_p",
                        vec![rt, dst, dot, ml, num, den, placement],
                    )
                }
            }
            "mpc.lin" | "mpc.lin_mod" => {
                let (x, y) = (self.slot_arg(op, 0)?, self.slot_arg(op, 1)?);
                let (a, b) = (self.i64c(int("a")?), self.i64c(int("b")?));
                let k = ring_out()?;
                let dst = self.fresh(op)?;
                let callee = if name == "mpc.lin" {
                    "irisc_rt_lin"
                } else {
                    "irisc_rt_lin_mod"
                };
                (callee, vec![rt, dst, x, y, a, b, k])
            }
            "mpc.const_lift" => {
                let (src, m, k) = (
                    self.slot_arg(op, 0)?,
                    self.i32c(int("lift_bits")?),
                    ring_out()?,
                );
                ("irisc_rt_const_lift", vec![rt, self.fresh(op)?, src, m, k])
            }
            "mpc.lift" => {
                let (src, kin, kout) = (self.slot_arg(op, 0)?, ring_in()?, ring_out()?);
                ("irisc_rt_lift", vec![rt, self.fresh(op)?, src, kin, kout])
            }
            "mpc.lift_p" | "mpc.const_lift_p" => {
                let (src, m) = (self.slot_arg(op, 0)?, ring_out()?);
                let callee = if name == "mpc.lift_p" {
                    "irisc_rt_lift_p"
                } else {
                    "irisc_rt_const_lift_p"
                };
                (callee, vec![rt, self.fresh(op)?, src, m])
            }
            "mpc.mul" => {
                let (x, y, k) = (self.slot_arg(op, 0)?, self.slot_arg(op, 1)?, ring_out()?);
                ("irisc_rt_mul", vec![rt, self.fresh(op)?, x, y, k])
            }
            "mpc.additive_msb" => {
                let (src, k) = (self.slot_arg(op, 0)?, ring_in()?);
                ("irisc_rt_additive_msb", vec![rt, self.fresh(op)?, src, k])
            }
            "mpc.msb" | "mpc.msb_mod" | "mpc.bit_inject" => {
                let src = self.slot_arg(op, 0)?;
                let k = if name == "mpc.bit_inject" {
                    ring_out()?
                } else {
                    ring_in()?
                };
                let callee = match name {
                    "mpc.msb" => "irisc_rt_msb",
                    "mpc.msb_mod" => "irisc_rt_msb_mod",
                    _ => "irisc_rt_bit_inject",
                };
                (callee, vec![rt, self.fresh(op)?, src, k])
            }
            "mpc.const_bits" => {
                let v = self.i32c(int("value")?);
                ("irisc_rt_const_bits", vec![rt, self.fresh(op)?, v])
            }
            "mpc.self_dot" | "mpc.reshare_p" | "mpc.msb_p" | "mpc.not" => {
                let src = self.slot_arg(op, 0)?;
                let callee = match name {
                    "mpc.self_dot" => "irisc_rt_self_dot",
                    "mpc.reshare_p" => "irisc_rt_reshare_p",
                    "mpc.msb_p" => "irisc_rt_msb_p",
                    _ => "irisc_rt_not",
                };
                (callee, vec![rt, self.fresh(op)?, src])
            }
            "mpc.shamir_dot" => {
                let (table, _) = self.dot_table(name, op)?;
                let (x, y) = (self.slot_arg(op, 0)?, self.slot_arg(op, 1)?);
                (
                    "irisc_rt_shamir_dot",
                    vec![rt, self.fresh(op)?, x, y, table],
                )
            }
            "mpc.mask_len" => {
                let (x, y) = (self.slot_arg(op, 0)?, self.slot_arg(op, 1)?);
                let holders = self.i32c(mask_holders_of(op).map_err(err)? as i64);
                (
                    "irisc_rt_mask_len",
                    vec![rt, self.fresh(op)?, x, y, holders],
                )
            }
            "mpc.and" | "mpc.or" => {
                let (x, y) = (self.slot_arg(op, 0)?, self.slot_arg(op, 1)?);
                let callee = if name == "mpc.and" {
                    "irisc_rt_and"
                } else {
                    "irisc_rt_or"
                };
                (callee, vec![rt, self.fresh(op)?, x, y])
            }
            "mpc.mux" => {
                let (c, x, y) = (
                    self.slot_arg(op, 0)?,
                    self.slot_arg(op, 1)?,
                    self.slot_arg(op, 2)?,
                );
                ("irisc_rt_mux", vec![rt, self.fresh(op)?, c, x, y])
            }
            "mpc.or_tree" | "mpc.and_tree" | "mpc.sum" => {
                let (src, group) = (self.slot_arg(op, 0)?, self.i64c(int("group")?));
                let callee = match name {
                    "mpc.or_tree" => "irisc_rt_or_groups",
                    "mpc.and_tree" => "irisc_rt_and_groups",
                    _ => "irisc_rt_sum_groups",
                };
                (callee, vec![rt, self.fresh(op)?, src, group])
            }
            "mpc.open" | "mpc.open_int" => {
                let (src, to) = (self.slot_arg(op, 0)?, self.i32c(int("to")?));
                let callee = if name == "mpc.open" {
                    "irisc_rt_open"
                } else {
                    "irisc_rt_open_int"
                };
                (callee, vec![rt, self.fresh(op)?, src, to])
            }
            "mpc.output" => {
                let shape = OutputShape::from_name(&get_str(op, "shape").map_err(err)?)
                    .unwrap_or(OutputShape::Count)
                    .abi();
                let label = get_str(op, "label").map_err(err)?;
                let records = if op.operand_count() > 2 {
                    self.slot_arg(op, 2)?
                } else {
                    self.i32c(-1)
                };
                let (value, len) = (self.slot_arg(op, 1)?, self.i64c(label.len() as i64));
                let ptr = self.string_ptr(&label);
                (
                    "irisc_rt_output",
                    vec![
                        rt,
                        q()?.into(),
                        value,
                        records,
                        self.i32c(shape.into()),
                        ptr,
                        len,
                    ],
                )
            }
            "mpc.emit" => ("irisc_rt_emit", vec![rt, q()?.into()]),
            "mpc.to_xor" => {
                let src = self.slot_arg(op, 0)?;
                let is_bits = type_name(op.operand(0).map_err(err)?.r#type()) == "mpc.bits";
                let ring = if is_bits { self.i32c(1) } else { ring_in()? };
                let group = self.i64c(int("group")?);
                (
                    "irisc_rt_to_xor",
                    vec![rt, self.fresh(op)?, src, ring, group],
                )
            }
            "mpc.xor_concat" => {
                let (a, b) = (self.slot_arg(op, 0)?, self.slot_arg(op, 1)?);
                ("irisc_rt_xor_concat", vec![rt, self.fresh(op)?, a, b])
            }
            "mpc.beaver_eval" => {
                let src = self.slot_arg(op, 0)?;
                let hex = get_str(op, "circuit").map_err(err)?;
                let circuit = irisc_runtime::beaver::circuit::Circuit::from_hex(&hex)
                    .map_err(|e| err(format!("mpc.beaver_eval: {e}")))?
                    .encode();
                let table = get_str(op, "inputs").map_err(err)?;
                let (clen, tlen) = (
                    self.i64c(circuit.len() as i64),
                    self.i64c(table.len() as i64),
                );
                let (cptr, tptr) = (self.bytes_ptr(&circuit), self.string_ptr(&table));
                (
                    "irisc_rt_beaver_eval",
                    vec![rt, self.fresh(op)?, src, cptr, clen, tptr, tlen],
                )
            }
            "mpc.xor_to_bits" => {
                let src = self.slot_arg(op, 0)?;
                let (first, width) = (self.i64c(int("first")?), self.i64c(int("width")?));
                (
                    "irisc_rt_xor_to_bits",
                    vec![rt, self.fresh(op)?, src, first, width],
                )
            }
            "mpc.beaver_open" => {
                let src = self.slot_arg(op, 0)?;
                let (row, to) = (self.i64c(int("row")?), self.i32c(int("to")?));
                (
                    "irisc_rt_beaver_open",
                    vec![rt, self.fresh(op)?, src, row, to],
                )
            }
            other => return Err(err(format!("no code generation for `{other}`"))),
        };
        self.checked_call(callee, &args, &name[4..])
    }

    /// The kernel table a dot-product op passes to the runtime, and the runtime's kind of it
    /// ([`BatchDotKind`]). A Shamir dot product is specialised to the code
    /// length of the gallery (the runtime checks that the query's equals it); without a known
    /// length the table is null and the runtime's reference runs.
    pub(super) fn dot_table<'c: 'a, 'a>(
        &mut self,
        name: &str,
        op: &impl OperationLike<'c, 'a>,
    ) -> Result<(BasicMetadataValueEnum<'ctx>, i64), CodegenError> {
        if name == "mpc.masked_dot" || name == "mpc.batch_masked_dot" {
            let code_bits = get_int(op, "code_bits").map_err(err)?;
            let code_bits = u32::try_from(code_bits).map_err(err)?;
            let width = kernel::storage_bits(self.ring(op, Some(0))?);
            let ring = kernel::DotRing::replicated(width)?;
            let tile = crate::passes::kernel_tile::tile_of(op).map_err(err)?;
            let polyphase = crate::passes::kernel_tile::polyphase_of(op).map_err(err)?;
            let table = kernel::table_tiled(
                self.cx,
                self.module,
                ring,
                code_bits,
                tile.as_ref(),
                polyphase,
            )?;
            self.used_dot(ring, code_bits);
            return Ok((
                table.as_pointer_value().into(),
                BatchDotKind::Masked.abi().into(),
            ));
        }
        let t = op.operand(0).map_err(err)?.r#type().to_string();
        let kind = if t.contains("\"fp\"") {
            Some((kernel::DotRing::Fp, 1))
        } else if t.contains("\"gr2\"") {
            Some((kernel::DotRing::Gr16, 2))
        } else if t.contains("\"gr4\"") {
            Some((kernel::DotRing::Gr16, 4))
        } else {
            None
        };
        let table = match (kind, self.slot_len(op, 1)) {
            (Some((ring, d)), Some(len)) if len > 0 => {
                let words = u32::try_from(len.div_ceil(d) * d).map_err(err)?;
                let tile = crate::passes::kernel_tile::tile_of(op).map_err(err)?;
                // The rotations move cells of the code's bits: the words must be those bits
                // (no padding of the last GR element).
                let polyphase = crate::passes::kernel_tile::polyphase_of(op)
                    .map_err(err)?
                    .filter(|_| u64::from(words) == len);
                self.used_dot(ring, words);
                kernel::table_tiled(self.cx, self.module, ring, words, tile.as_ref(), polyphase)?
                    .as_pointer_value()
                    .into()
            }
            _ => self
                .cx
                .ptr_type(AddressSpace::default())
                .const_null()
                .into(),
        };
        Ok((table, BatchDotKind::Shamir.abi().into()))
    }

    /// Records that the schedule runs the dot kernel of (`ring`, `words`).
    fn used_dot(&mut self, ring: kernel::DotRing, words: u32) {
        if !self.dots.contains(&(ring, words)) {
            self.dots.push((ring, words));
        }
    }

    /// The dot products of the batch's queries with chunk `c` of the gallery: one
    /// `irisc_rt_batch_dot`, results in per-query slots; `joined` (a batched chunk stage):
    /// `irisc_rt_batch_dot_joined`, the batch's one value in the batch layout, in one slot.
    pub(super) fn batch_dot(
        &mut self,
        op: &OperationRef<'_, '_>,
        nb: IntValue<'ctx>,
        c: IntValue<'ctx>,
        joined: bool,
    ) -> Result<(), CodegenError> {
        let name = op_name(op);
        let (table, kind) = self.dot_table(&name, op)?;
        let codes = match self.slot(op.operand(0).map_err(err)?)? {
            Slot::Dyn(base) => base,
            _ => return Err(err("a batch dot product of codes outside the query stage")),
        };
        let gallery = match self.slot(op.operand(1).map_err(err)?)? {
            Slot::Fixed(n) => n,
            _ => return Err(err("a batch dot product with a gallery outside a slot")),
        };
        let dst = self.next_slot;
        let (slots, slot) = if joined {
            (1, Slot::Fixed(dst))
        } else {
            (self.query_batch, Slot::Dyn(dst))
        };
        self.next_slot += slots;
        self.slots.insert(key(op.result(0).map_err(err)?), slot);
        let args = [
            self.rt.into(),
            self.i32c(dst.into()),
            self.i32c(codes.into()),
            nb.into(),
            self.i32c(gallery.into()),
            c.into(),
            table,
            self.i32c(kind),
        ];
        let callee = if joined {
            "irisc_rt_batch_dot_joined"
        } else {
            "irisc_rt_batch_dot"
        };
        self.checked_call(callee, &args, "batch_dot")
    }

    /// The first slot of a value held per query of the batch (`op`'s operand `i`).
    fn per_query_base(&self, op: &OperationRef<'_, '_>, i: usize) -> Result<u32, CodegenError> {
        match self.slot(op.operand(i).map_err(err)?)? {
            Slot::Dyn(base) => Ok(base),
            _ => Err(err(format!(
                "`{}` reads a value that is not held per query",
                op_name(op)
            ))),
        }
    }

    /// One op of a batched chunk stage (or of the batch's finish), run once for the `nb`
    /// queries of the batch: the batch forms by their entry points, every other op as it is.
    pub(super) fn batch_op(
        &mut self,
        op: &OperationRef<'_, '_>,
        nb: IntValue<'ctx>,
    ) -> Result<(), CodegenError> {
        let name = op_name(op);
        let rt = self.rt.into();
        let int = |a: &str| get_int(op, a).map_err(err);
        let (callee, args): (&str, Vec<BasicMetadataValueEnum>) = match name.as_str() {
            "mpc.batch_mask_len" => {
                let codes = self.per_query_base(op, 0)?;
                let gallery = self.slot_arg(op, 1)?;
                let codes = self.i32c(codes.into());
                let holders = self.i32c(mask_holders_of(op).map_err(err)? as i64);
                let dst = self.fresh(op)?;
                (
                    "irisc_rt_batch_mask_len",
                    vec![rt, dst, codes, nb.into(), gallery, holders],
                )
            }
            "mpc.batch_spread" => {
                let src = self.per_query_base(op, 0)?;
                let (src, like) = (self.i32c(src.into()), self.slot_arg(op, 1)?);
                let width = self.i64c(int("width")?);
                let dst = self.fresh(op)?;
                (
                    "irisc_rt_batch_spread",
                    vec![rt, dst, src, nb.into(), like, width],
                )
            }
            "mpc.batch_repeat" => {
                let (src, width) = (self.slot_arg(op, 0)?, self.i64c(int("width")?));
                let dst = self.fresh(op)?;
                (
                    "irisc_rt_batch_repeat",
                    vec![rt, dst, src, nb.into(), width],
                )
            }
            "mpc.or_tree" | "mpc.and_tree" | "mpc.sum" if get_int(op, "per_query").is_ok() => {
                let (src, width) = (self.slot_arg(op, 0)?, self.i64c(int("per_query")?));
                let callee = match name.as_str() {
                    "mpc.or_tree" => "irisc_rt_or_per_query",
                    "mpc.and_tree" => "irisc_rt_and_per_query",
                    _ => "irisc_rt_sum_per_query",
                };
                let dst = self.fresh(op)?;
                (callee, vec![rt, dst, src, nb.into(), width])
            }
            _ => return self.op(&name, op, None),
        };
        self.checked_call(callee, &args, &name[4..])
    }

    /// `batch_pick`: the current query's part of a batch value, in the per-query finish.
    pub(super) fn batch_pick(
        &mut self,
        op: &OperationRef<'_, '_>,
        nb: IntValue<'ctx>,
    ) -> Result<(), CodegenError> {
        let j = self
            .batch_query
            .ok_or_else(|| err("batch_pick outside the per-query loop"))?;
        let src = self.slot_arg(op, 0)?;
        let width = self.i64c(get_int(op, "width").map_err(err)?);
        let dst = self.fresh(op)?;
        let args = [self.rt.into(), dst, src, j.into(), nb.into(), width];
        self.checked_call("irisc_rt_batch_pick", &args, "batch_pick")
    }
}
