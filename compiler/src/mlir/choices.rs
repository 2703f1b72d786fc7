//! The one place the choice enums meet the IR: [`Sharing`], [`Variant`] and [`Protocol`] to and
//! from their typed `irs` attributes (`#irs.sharing<"rep3">`, `#irs.variant<"mpc-lift">`,
//! `#irs.protocol<"rep3">`, declared in `dialects/irs.irdl.mlir`, whose constraints reject any
//! other spelling).

use crate::analysis::plan::{Protocol, Sharing, Variant};
use melior::{ir::Attribute, Context};

/// `#irs.<kind><"<name>">`.
fn parse<'c>(cx: &'c Context, kind: &str, name: &str) -> Attribute<'c> {
    let text = format!("#irs.{kind}<\"{name}\">");
    // The names come from the enums below, which the dialect's constraints list.
    Attribute::parse(cx, &text)
        .unwrap_or_else(|| panic!("internal error: `{text}` is not an `irs` attribute"))
}

/// The quoted parameter of `#irs.<kind><"name">`, if `a` is such an attribute.
fn name_of(a: Attribute<'_>, kind: &str) -> Option<String> {
    let text = a.to_string();
    let inner = text
        .strip_prefix(&format!("#irs.{kind}<\""))?
        .strip_suffix("\">")?;
    Some(inner.to_string())
}

impl Sharing {
    pub fn to_attr(self, cx: &Context) -> Attribute<'_> {
        parse(cx, "sharing", self.name())
    }

    pub fn from_attr(a: Attribute<'_>) -> Option<Sharing> {
        Sharing::parse(&name_of(a, "sharing")?)
    }
}

impl Variant {
    pub fn to_attr(self, cx: &Context) -> Attribute<'_> {
        parse(cx, "variant", self.name())
    }

    pub fn from_attr(a: Attribute<'_>) -> Option<Variant> {
        Variant::parse(&name_of(a, "variant")?)
    }
}

impl Protocol {
    pub fn to_attr(self, cx: &Context) -> Attribute<'_> {
        parse(cx, "protocol", self.name())
    }

    pub fn from_attr(a: Attribute<'_>) -> Option<Protocol> {
        Protocol::parse(&name_of(a, "protocol")?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mlir::Compiler;

    #[test]
    fn every_choice_round_trips_through_its_attribute() {
        let cx = Compiler::new().unwrap();
        let ctx = cx.context();
        for s in Sharing::ALL {
            assert_eq!(Sharing::from_attr(s.to_attr(ctx)), Some(s));
            assert_eq!(Variant::from_attr(s.to_attr(ctx)), None);
        }
        for v in Variant::ALL {
            assert_eq!(Variant::from_attr(v.to_attr(ctx)), Some(v));
        }
        assert_eq!(
            Protocol::from_attr(Protocol::Rep3.to_attr(ctx)),
            Some(Protocol::Rep3)
        );
        assert_eq!(
            Sharing::Gr4.to_attr(ctx).to_string(),
            "#irs.sharing<\"gr4\">"
        );
    }

    #[test]
    fn the_dialect_rejects_a_misspelt_choice() {
        let cx = Compiler::new().unwrap();
        assert!(Attribute::parse(cx.context(), "#irs.sharing<\"rep4\">").is_none());
        assert!(Attribute::parse(cx.context(), "#irs.variant<\"mpc_lift\">").is_none());
    }
}
