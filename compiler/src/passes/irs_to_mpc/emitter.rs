//! The state of `irs-to-mpc`: the `@query` block being built, what each `irs` value became,
//! and the gallery loads `@setup` must provide.

use std::collections::HashMap;

use super::{fail, PassError};
use crate::mlir::{get_int, get_str, int_attr, op_name, parse_type, str_attr, Compiler};
use irisc_runtime::contract::InputPart;
use irisc_runtime::vocab::Mirror;
use melior::{
    dialect::func,
    ir::{
        attribute::{StringAttribute, TypeAttribute},
        block::BlockLike,
        operation::{OperationBuilder, OperationLike, OperationRef},
        r#type::{FunctionType, IntegerType},
        Attribute, Block, Identifier, Location, Module, Region, RegionLike, Type, Value, ValueLike,
    },
};

/// What an `irs` operand names, before a comparison decides the ring and sharing to load it in.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Src {
    /// The current query of input `input`.
    Query { input: i64, name: String },
    /// The current query (its mirror image when `mirror`) rotated by `lo..=hi`.
    Rotated {
        input: i64,
        name: String,
        lo: i64,
        hi: i64,
        mirror: bool,
    },
    /// Records: a gallery (`earlier = false`) or the earlier queries of the batch.
    Records {
        input: i64,
        name: String,
        earlier: bool,
    },
}

/// Parts of an input, as the runtime loads them (the contract's [`InputPart`]).
pub const PART_CODE: i64 = InputPart::Codes as i64;
pub const PART_MASK: i64 = InputPart::Masks as i64;
pub const PART_VECTOR: i64 = InputPart::Embedding as i64;
pub const PART_BIT: i64 = InputPart::Bit as i64;
pub const PART_CONJUGATE: i64 = InputPart::Conjugate as i64;

/// Whether `ty` is a Galois-ring Shamir share type (`!mpc.shamir<"gr2">`, `<"gr4">`), whose
/// shares hold whole 2- or 4-entry groups of a cell.
fn galois_ring(ty: &str) -> bool {
    ty.starts_with("!mpc.shamir<\"gr")
}

/// A gallery load of `@setup`: input, part and result type.
#[derive(Debug, Clone, PartialEq, Eq)]
struct GalleryLoad {
    input: i64,
    name: String,
    part: i64,
    ty: String,
}

pub struct Emitter<'c> {
    pub cx: &'c Compiler,
    query: Block<'c>,
    galleries: Vec<GalleryLoad>,
    // Keys are raw pointers of values of `query`, which lives as long as the emitter.
    map: HashMap<usize, LoweredKey>,
    loads: HashMap<(Src, i64, String), usize>,
    /// Results computed once per (op, operands, attributes): two comparisons of the same pair
    /// (e.g. the branches of a secret `if`) share their dot products.
    memo: HashMap<String, usize>,
    values: Vec<RawValue>,
    /// Under the `beaver` family: the reveals' circuit being built (`None` under `rep3`).
    pub beaver: Option<super::lanes::BeaverLowering>,
    /// Groups of `any`/`all` ops whose reduction inside each record moved into the circuit:
    /// the op (by its raw pointer) now reduces the records' results, in groups of this size.
    pub group_after_circuit: HashMap<usize, i64>,
}

/// Values are stored by their raw handle so the emitter can own the block they live in.
#[derive(Clone, Copy)]
struct RawValue(mlir_sys::MlirValue);

enum LoweredKey {
    Src(Src),
    Bits(usize),
    Number(usize),
    /// A boolean value under `beaver`: a fragment of the reveals' circuit.
    Frag(usize),
}

pub fn key<'c>(v: impl ValueLike<'c>) -> usize {
    v.to_raw().ptr as usize
}

impl<'c> Emitter<'c> {
    pub fn new(cx: &'c Compiler, beaver: bool) -> Self {
        let i64_t: Type = IntegerType::new(cx.context(), 64).into();
        Emitter {
            cx,
            query: Block::new(&[(i64_t, cx.unknown_location())]),
            galleries: Vec::new(),
            map: HashMap::new(),
            loads: HashMap::new(),
            memo: HashMap::new(),
            values: Vec::new(),
            beaver: beaver.then(Default::default),
            group_after_circuit: HashMap::new(),
        }
    }

    fn store(&mut self, v: Value<'c, '_>) -> usize {
        self.values.push(RawValue(v.to_raw()));
        self.values.len() - 1
    }

    fn value(&self, i: usize) -> Value<'c, '_> {
        // SAFETY: every stored value is a result or argument of `self.query`, which is alive.
        unsafe { Value::from_raw(self.values[i].0) }
    }

    pub fn ty(&self, text: &str) -> Result<Type<'c>, PassError> {
        parse_type(self.cx.context(), text).map_err(fail)
    }

    pub fn int(&self, name: &str, v: i64) -> (Identifier<'c>, Attribute<'c>) {
        int_attr(self.cx.context(), name, v)
    }

    pub fn string(&self, name: &str, v: &str) -> (Identifier<'c>, Attribute<'c>) {
        str_attr(self.cx.context(), name, v)
    }

    /// The query number (argument 0 of `@query`).
    pub fn query_index(&self) -> Value<'c, '_> {
        self.query
            .argument(0)
            .expect("@query has its index argument")
            .into()
    }

    /// Appends `name(operands) {attrs} : result` to `@query`; returns the result's handle.
    pub fn op(
        &mut self,
        name: &str,
        at: Location<'c>,
        operands: &[Handle],
        attrs: &[(Identifier<'c>, Attribute<'c>)],
        result: Option<&str>,
    ) -> Result<Option<Handle>, PassError> {
        let operands: Vec<Value> = operands.iter().map(|h| self.get(*h)).collect();
        let mut b = OperationBuilder::new(name, at)
            .add_operands(&operands)
            .add_attributes(attrs);
        if let Some(t) = result {
            b = b.add_results(&[self.ty(t)?]);
        }
        let op = b
            .build()
            .map_err(|e| fail(format!("building `{name}`: {e}")))?;
        let op = self.query.append_operation(op);
        match result {
            Some(_) => {
                let v: Value = op.result(0).map_err(|e| fail(e.to_string()))?.into();
                let raw = v.to_raw();
                self.values.push(RawValue(raw));
                Ok(Some(Handle(self.values.len() - 1)))
            }
            None => Ok(None),
        }
    }

    /// Like [`Self::op1`], but an op with the same name, operands, attributes and result type as
    /// an earlier one reuses its result (only for ops without side effects or randomness).
    pub fn op1_memo(
        &mut self,
        name: &str,
        at: Location<'c>,
        operands: &[Handle],
        attrs: &[(Identifier<'c>, Attribute<'c>)],
        result: &str,
    ) -> Result<Handle, PassError> {
        let key = format!(
            "{name}{operands:?}{:?}{result}",
            attrs
                .iter()
                .map(|(k, v)| format!("{}={v}", k.as_string_ref().as_str().unwrap_or("")))
                .collect::<Vec<_>>()
        );
        if let Some(h) = self.memo.get(&key) {
            return Ok(Handle(*h));
        }
        let h = self.op1(name, at, operands, attrs, result)?;
        self.memo.insert(key, h.0);
        Ok(h)
    }

    /// Like [`Self::op`] for ops with one result.
    pub fn op1(
        &mut self,
        name: &str,
        at: Location<'c>,
        operands: &[Handle],
        attrs: &[(Identifier<'c>, Attribute<'c>)],
        result: &str,
    ) -> Result<Handle, PassError> {
        Ok(self
            .op(name, at, operands, attrs, Some(result))?
            .expect("an op with a result type has a result"))
    }

    pub fn get(&self, h: Handle) -> Value<'c, '_> {
        if h.0 == usize::MAX {
            return self.query_index();
        }
        self.value(h.0)
    }

    /// The handle of the query number.
    pub fn query_handle(&self) -> Handle {
        Handle(usize::MAX)
    }

    /// Records what an `irs.query_value` / `irs.records` / `irs.rotate` names.
    pub fn source<'a>(&mut self, op: &OperationRef<'c, 'a>) -> Result<(), PassError> {
        let src = match op_name(op).as_str() {
            "irs.query_value" => Src::Query {
                input: get_int(op, "input").map_err(fail)?,
                name: get_str(op, "name").map_err(fail)?,
            },
            "irs.records" => Src::Records {
                input: get_int(op, "input").map_err(fail)?,
                name: get_str(op, "name").map_err(fail)?,
                earlier: get_str(op, "source").map_err(fail)? == "earlier",
            },
            "irs.rotate" => {
                let Src::Query { input, name } = self.src_of(op, 0)? else {
                    return Err(fail("`irs.rotate` of something other than a query"));
                };
                Src::Rotated {
                    input,
                    name,
                    lo: get_int(op, "lo").map_err(fail)?,
                    hi: get_int(op, "hi").map_err(fail)?,
                    mirror: get_int(op, "mirror").unwrap_or(0) != 0,
                }
            }
            other => return Err(fail(format!("`{other}` is not an operand source"))),
        };
        let r = op.result(0).map_err(|e| fail(e.to_string()))?;
        self.map.insert(key(r), LoweredKey::Src(src));
        Ok(())
    }

    /// What operand `i` of `op` names.
    pub fn src_of<'a>(&self, op: &OperationRef<'c, 'a>, i: usize) -> Result<Src, PassError> {
        let v = op.operand(i).map_err(|e| fail(e.to_string()))?;
        match self.map.get(&key(v)) {
            Some(LoweredKey::Src(s)) => Ok(s.clone()),
            _ => Err(fail(format!(
                "operand {i} of `{}` is not an input, a rotation or records",
                op_name(op)
            ))),
        }
    }

    /// Operand `i` of `op` as binary shares: a computed bit vector, or a `bit` input loaded.
    pub fn bits_of<'a>(
        &mut self,
        op: &OperationRef<'c, 'a>,
        i: usize,
    ) -> Result<Handle, PassError> {
        let v = op.operand(i).map_err(|e| fail(e.to_string()))?;
        match self.map.get(&key(v)) {
            Some(LoweredKey::Bits(h)) => Ok(Handle(*h)),
            Some(LoweredKey::Src(s)) => {
                let s = s.clone();
                self.load(&s, PART_BIT, "!mpc.bits", op.location())
            }
            _ => Err(fail(format!(
                "operand {i} of `{}` is not a bit vector",
                op_name(op)
            ))),
        }
    }

    /// Operand `i` of `op` as a secret count.
    pub fn number_of<'a>(&self, op: &OperationRef<'c, 'a>, i: usize) -> Result<Handle, PassError> {
        let v = op.operand(i).map_err(|e| fail(e.to_string()))?;
        match self.map.get(&key(v)) {
            Some(LoweredKey::Number(h)) => Ok(Handle(*h)),
            _ => Err(fail(format!(
                "operand {i} of `{}` is not a count",
                op_name(op)
            ))),
        }
    }

    /// Under `beaver`: operand `i` of `op` as a fragment of the reveals' circuit (a `bit` input
    /// is loaded and becomes a leaf).
    pub fn frag_of<'a>(&mut self, op: &OperationRef<'c, 'a>, i: usize) -> Result<usize, PassError> {
        let v = op.operand(i).map_err(|e| fail(e.to_string()))?;
        match self.map.get(&key(v)) {
            Some(LoweredKey::Frag(f)) => Ok(*f),
            Some(LoweredKey::Src(s)) => {
                let s = s.clone();
                let h = self.load(&s, PART_BIT, "!mpc.bits", op.location())?;
                Ok(self.beaver_mut()?.bit(h))
            }
            _ => Err(fail(format!(
                "operand {i} of `{}` is not a bit vector",
                op_name(op)
            ))),
        }
    }

    /// The `beaver` lowering's state.
    pub fn beaver_mut(&mut self) -> Result<&mut super::lanes::BeaverLowering, PassError> {
        self.beaver
            .as_mut()
            .ok_or_else(|| fail("a beaver step outside a beaver program"))
    }

    /// The fragment operand `i` of `op` is (under `beaver`), with the operand's key.
    pub fn frag_operand<'a>(&self, op: &OperationRef<'c, 'a>, i: usize) -> Option<(usize, usize)> {
        let v = op.operand(i).ok()?;
        match self.map.get(&key(v)) {
            Some(LoweredKey::Frag(f)) => Some((key(v), *f)),
            _ => None,
        }
    }

    /// Elements per lane of operand `i` of `op` when it is a fragment.
    pub fn frag_width<'a>(&self, op: &OperationRef<'c, 'a>, i: usize) -> Option<usize> {
        let (_, f) = self.frag_operand(op, i)?;
        Some(self.beaver.as_ref()?.width(f))
    }

    /// The `group` of `any`/`all` op `op`: as written, or as the circuit left it.
    pub fn group<'a>(&self, op: &OperationRef<'c, 'a>) -> Result<i64, PassError> {
        match self.group_after_circuit.get(&(op.to_raw().ptr as usize)) {
            Some(g) => Ok(*g),
            None => get_int(op, "group").map_err(fail),
        }
    }

    /// The `irs` value `key` is now the binary shares `h`.
    pub fn set_bits_key(&mut self, key: usize, h: Handle) {
        self.map.insert(key, LoweredKey::Bits(h.0));
    }

    pub fn set_frag<'a>(&mut self, op: &OperationRef<'c, 'a>, f: usize) -> Result<(), PassError> {
        let r = op.result(0).map_err(|e| fail(e.to_string()))?;
        self.map.insert(key(r), LoweredKey::Frag(f));
        Ok(())
    }

    pub fn set_bits<'a>(&mut self, op: &OperationRef<'c, 'a>, h: Handle) -> Result<(), PassError> {
        let r = op.result(0).map_err(|e| fail(e.to_string()))?;
        self.map.insert(key(r), LoweredKey::Bits(h.0));
        Ok(())
    }

    pub fn set_number<'a>(
        &mut self,
        op: &OperationRef<'c, 'a>,
        h: Handle,
    ) -> Result<(), PassError> {
        let r = op.result(0).map_err(|e| fail(e.to_string()))?;
        self.map.insert(key(r), LoweredKey::Number(h.0));
        Ok(())
    }

    /// `src`'s `part` in the share type `ty` (`!mpc.code<k>`, `!mpc.shamir<"gr4">`, `!mpc.bits`),
    /// loaded once: galleries in `@setup`, queries and earlier queries per query.
    pub fn load(
        &mut self,
        src: &Src,
        part: i64,
        ty: &str,
        at: Location<'c>,
    ) -> Result<Handle, PassError> {
        let k = (src.clone(), part, ty.to_string());
        if let Some(h) = self.loads.get(&k) {
            return Ok(Handle(*h));
        }
        let q = self.query_handle();
        let h = match src {
            Src::Query { input, name } => {
                let attrs = [
                    self.string("name", name),
                    self.int("input", *input),
                    self.int("part", part),
                ];
                self.op1("mpc.load_query", at, &[q], &attrs, ty)?
            }
            Src::Rotated {
                input,
                name,
                lo,
                hi,
                mirror,
            } => {
                // A code's mirror negates its imaginary entries and a secret mask's moves them.
                // A Galois-ring share holds a cell's entries together and cannot negate some
                // of them locally: there the query's owner dealt the code's conjugate, which
                // the parties load and mirror by positions only.
                let conjugate = *mirror && part == PART_CODE && galois_ring(ty);
                let base = self.load(
                    &Src::Query {
                        input: *input,
                        name: name.clone(),
                    },
                    if conjugate { PART_CONJUGATE } else { part },
                    ty,
                    at,
                )?;
                let mut attrs = vec![self.int("lo", *lo), self.int("hi", *hi)];
                if *mirror {
                    let kind = if part == PART_CODE && !conjugate {
                        Mirror::Codes
                    } else {
                        Mirror::Positions
                    };
                    attrs.push(self.int("mirror", kind as i64));
                }
                self.op1("mpc.rotate", at, &[base], &attrs, ty)?
            }
            Src::Records {
                input,
                name,
                earlier: true,
            } => {
                let attrs = [
                    self.string("name", name),
                    self.int("input", *input),
                    self.int("part", part),
                ];
                self.op1("mpc.load_earlier", at, &[q], &attrs, ty)?
            }
            Src::Records {
                input,
                name,
                earlier: false,
            } => {
                self.galleries.push(GalleryLoad {
                    input: *input,
                    name: name.clone(),
                    part,
                    ty: ty.to_string(),
                });
                let t = self.ty(ty)?;
                let v = self.query.add_argument(t, self.cx.unknown_location());
                Handle(self.store(v))
            }
        };
        self.loads.insert(k, h.0);
        Ok(h)
    }

    /// Some loaded form of `src` (for the record ids of an `ids` output).
    pub fn any_load(&self, src: &Src) -> Option<Handle> {
        self.loads
            .iter()
            .filter(|((s, part, _), _)| s == src && *part != PART_BIT)
            .map(|(_, h)| Handle(*h))
            .min_by_key(|h| h.0)
    }

    /// Ends `@query` and builds the module: `@setup` loading every gallery, then `@query`.
    pub fn finish(mut self, at: Location<'c>) -> Result<Module<'c>, PassError> {
        let q = self.query_handle();
        self.op("mpc.emit", self.cx.unknown_location(), &[q], &[], None)?;
        self.query
            .append_operation(func::r#return(&[], self.cx.unknown_location()));
        let cx = self.cx;
        let ctx = cx.context();
        let out = Module::new(at);

        let setup = Block::new(&[]);
        let mut types = Vec::new();
        let mut loaded = Vec::new();
        for g in &self.galleries {
            let t = self.ty(&g.ty)?;
            let op = OperationBuilder::new("mpc.load_gallery", cx.unknown_location())
                .add_attributes(&[
                    self.string("name", &g.name),
                    self.int("input", g.input),
                    self.int("part", g.part),
                ])
                .add_results(&[t])
                .build()
                .map_err(|e| fail(e.to_string()))?;
            let op = setup.append_operation(op);
            loaded.push(op.result(0).map_err(|e| fail(e.to_string()))?.into());
            types.push(t);
        }
        setup.append_operation(func::r#return(&loaded, cx.unknown_location()));
        drop(loaded);
        out.body()
            .append_operation(function(cx, "setup", &[], &types, setup));

        let i64_t: Type = IntegerType::new(ctx, 64).into();
        let mut inputs = vec![i64_t];
        inputs.extend(types);
        self.values.clear();
        out.body()
            .append_operation(function(cx, "query", &inputs, &[], self.query));
        Ok(out)
    }
}

pub use super::handle::Handle;

fn function<'c>(
    cx: &'c Compiler,
    name: &str,
    inputs: &[Type<'c>],
    results: &[Type<'c>],
    body: Block<'c>,
) -> melior::ir::Operation<'c> {
    let ctx = cx.context();
    let region = Region::new();
    region.append_block(body);
    func::func(
        ctx,
        StringAttribute::new(ctx, name),
        TypeAttribute::new(FunctionType::new(ctx, inputs, results).into()),
        region,
        &[],
        cx.unknown_location(),
    )
}
