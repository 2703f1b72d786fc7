//! The one place the choice words meet the IR: [`Sharing`], [`Variant`], [`Protocol`] and
//! [`MsbInput`] (from [`irisc_runtime::vocab`]) to and from their typed `irs` attributes
//! (`#irs.sharing<"rep3">`, `#irs.variant<"mpc-lift">`, `#irs.protocol<"rep3">`,
//! `#irs.msb_input<"additive">`, declared in `dialects/irs.irdl.mlir`,
//! whose constraints reject any other spelling).

use irisc_runtime::vocab::{MsbInput, Protocol, Sharing, Variant};
use melior::{ir::Attribute, Context};

/// `#irs.<kind><"<name>">`.
fn parse<'c>(cx: &'c Context, kind: &str, name: &str) -> Attribute<'c> {
    let text = format!("#irs.{kind}<\"{name}\">");
    // The names come from the vocabulary's `name`, which the dialect's constraints list.
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

/// A choice the passes record on ops as a typed `irs` attribute `#irs.<KIND><"name">`.
pub trait ChoiceAttr: Copy + Sized {
    /// The attribute's mnemonic in the `irs` dialect.
    const KIND: &'static str;

    /// The spelling inside the attribute (the vocabulary's `name`).
    fn spelling(self) -> &'static str;

    /// The choice spelt `s`, if any.
    fn from_spelling(s: &str) -> Option<Self>;

    fn to_attr(self, cx: &Context) -> Attribute<'_> {
        parse(cx, Self::KIND, self.spelling())
    }

    fn from_attr(a: Attribute<'_>) -> Option<Self> {
        Self::from_spelling(&name_of(a, Self::KIND)?)
    }
}

macro_rules! choice_attr {
    ($($t:ty => $kind:literal),*) => {$(
        impl ChoiceAttr for $t {
            const KIND: &'static str = $kind;

            fn spelling(self) -> &'static str {
                self.name()
            }

            fn from_spelling(s: &str) -> Option<Self> {
                <$t>::parse(s)
            }
        }
    )*};
}
choice_attr!(Sharing => "sharing", Variant => "variant", Protocol => "protocol", MsbInput => "msb_input");

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
        for m in MsbInput::ALL {
            assert_eq!(MsbInput::from_attr(m.to_attr(ctx)), Some(m));
            assert_eq!(Variant::from_attr(m.to_attr(ctx)), None);
        }
        for p in Protocol::ALL {
            assert_eq!(Protocol::from_attr(p.to_attr(ctx)), Some(p));
        }
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
