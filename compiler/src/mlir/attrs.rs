//! Small helpers to build and read the attributes and parametric types of the IRDL dialects.
//!
//! IRDL dialects get no generated accessors, so ops are built with `OperationBuilder` and read
//! back through their named attributes; a type's ring parameter is read from its printed form.

use melior::{
    ir::{
        attribute::{IntegerAttribute, StringAttribute},
        operation::OperationLike,
        r#type::IntegerType,
        Attribute, Identifier, Type,
    },
    Context,
};

/// `name = <v> : i64`.
pub fn int_attr<'c>(cx: &'c Context, name: &str, v: i64) -> (Identifier<'c>, Attribute<'c>) {
    (
        Identifier::new(cx, name),
        IntegerAttribute::new(IntegerType::new(cx, 64).into(), v).into(),
    )
}

/// `name = "<v>"`.
pub fn str_attr<'c>(cx: &'c Context, name: &str, v: &str) -> (Identifier<'c>, Attribute<'c>) {
    (
        Identifier::new(cx, name),
        StringAttribute::new(cx, v).into(),
    )
}

/// The integer attribute `name` of `op`, or an error naming the op and the attribute.
pub fn get_int<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>, name: &str) -> Result<i64, String> {
    let a = op
        .attribute(name)
        .map_err(|_| format!("`{}` lacks the attribute `{name}`", op_name(op)))?;
    IntegerAttribute::try_from(a)
        .map(|i| i.value())
        .map_err(|_| format!("attribute `{name}` of `{}` is not an integer", op_name(op)))
}

/// The string attribute `name` of `op`.
pub fn get_str<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>, name: &str) -> Result<String, String> {
    let a = op
        .attribute(name)
        .map_err(|_| format!("`{}` lacks the attribute `{name}`", op_name(op)))?;
    StringAttribute::try_from(a)
        .map(|s| s.value().to_string())
        .map_err(|_| format!("attribute `{name}` of `{}` is not a string", op_name(op)))
}

/// Parses a type such as `!mpc.rep<16>`; the text is produced by the compiler itself.
pub fn parse_type<'c>(cx: &'c Context, text: &str) -> Result<Type<'c>, String> {
    Type::parse(cx, text).ok_or_else(|| format!("internal error: the type `{text}` does not parse"))
}

/// The integer parameter of a one-parameter dialect type: `!mpc.rep<16 : i64>` gives 16.
pub fn type_param(t: Type<'_>) -> Option<u64> {
    let text = t.to_string();
    let inner = text.split_once('<')?.1.strip_suffix('>')?;
    inner.split(':').next()?.trim().parse().ok()
}

/// The dialect type name without parameters: `!mpc.rep<16 : i64>` gives `mpc.rep`.
pub fn type_name(t: Type<'_>) -> String {
    let text = t.to_string();
    let text = text.trim_start_matches('!');
    text.split('<').next().unwrap_or(text).to_string()
}

/// The name of `op` (`irs.fhd_lt`), for messages.
pub fn op_name<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> String {
    op.name()
        .as_string_ref()
        .as_str()
        .unwrap_or("?")
        .to_string()
}
