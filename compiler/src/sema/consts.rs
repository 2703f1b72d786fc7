//! Numbers: integer and decimal literals, `const` values, and their exact meaning.
//!
//! Ratios stay exact fractions (`0.345` is `69/200`) because the public threshold of Lemma 1
//! is `floor((1 - 2 r) * ml)` and must not depend on floating-point rounding.

use super::names::{Globals, SymbolKind};
use super::program::{ConstValue, Ratio};
use crate::syntax::ast::{LitKind, Literal, Operand};
use crate::syntax::Diagnostic;

/// The value of a literal; ratios are checked to lie in `[0, 1]`.
pub fn literal_value(lit: &Literal) -> Result<ConstValue, Diagnostic> {
    match &lit.kind {
        LitKind::Int(text) => text.parse::<i64>().map(ConstValue::Int).map_err(|_| {
            Diagnostic::error("integer literal is too large", lit.span)
                .with_label("does not fit in 64 bits")
                .with_hint("code lengths, dimensions and rotations are small numbers, e.g. `12800`")
        }),
        LitKind::Decimal(text) => {
            let ratio = parse_decimal(text).ok_or_else(|| {
                Diagnostic::error("decimal has too many digits", lit.span)
                    .with_label("at most 18 digits are supported")
                    .with_hint("write the ratio with fewer digits, e.g. `0.345`")
            })?;
            if ratio.num > ratio.den {
                return Err(Diagnostic::error(
                    format!("ratio `{text}` is greater than 1"),
                    lit.span,
                )
                .with_label("must be between 0 and 1")
                .with_hint(
                    "a fractional Hamming distance lies in [0, 1]; the deployed threshold is 0.345",
                ));
            }
            Ok(ConstValue::Ratio(ratio))
        }
    }
}

/// `"0.345"` -> `69/200`, reduced; `None` if it does not fit in u64.
pub fn parse_decimal(text: &str) -> Option<Ratio> {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let digits = format!("{int}{frac}");
    if digits.len() > 18 {
        return None;
    }
    let num: u64 = digits.parse().ok()?;
    let den = 10u64.checked_pow(u32::try_from(frac.len()).ok()?)?;
    Some(reduce(num, den))
}

pub fn reduce(num: u64, den: u64) -> Ratio {
    let g = gcd(num, den).max(1);
    Ratio {
        num: num / g,
        den: den / g,
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The value of an operand written in place or through a `const` name.
pub fn operand_value(op: &Operand, globals: &Globals) -> Result<ConstValue, Diagnostic> {
    match op {
        Operand::Lit(l) => literal_value(l),
        Operand::Name(n) => match globals.get(&n.name) {
            Some(sym) => match sym.kind {
                SymbolKind::Const(c) => literal_value(&c.value),
                // Secret values (inputs, lets over them) cannot stand where the compiler needs a
                // public number: thresholds, lengths and rotation bounds shape the protocol.
                SymbolKind::Input(..) | SymbolKind::Let(_) => Err(Diagnostic::error(
                    format!(
                        "`{}` is {}, a secret value, but a public number is required here",
                        n.name,
                        sym.kind.describe()
                    ),
                    n.span,
                )
                .with_label("a public number is expected here")
                .with_secondary(sym.span, "declared here")
                .with_hint(
                    "write a number or a `const`; to choose between public values by a secret \
                     bit, compare with each and select: `if bit { fhd(c, d) < 0.30 } else { fhd(c, d) < 0.375 }`",
                )),
                other => Err(Diagnostic::error(
                    format!("`{}` is {}, not a constant", n.name, other.describe()),
                    n.span,
                )
                .with_label("a number is expected here")
                .with_secondary(sym.span, "declared here")
                .with_hint("write a number, or the name of a `const`")),
            },
            None => Err(globals.unknown(n, "constant", &[], |k| matches!(k, SymbolKind::Const(_)))),
        },
    }
}

/// An operand that must be an integer (a code length or a rotation bound).
pub fn int_operand(op: &Operand, globals: &Globals, what: &str) -> Result<i64, Diagnostic> {
    match operand_value(op, globals)? {
        ConstValue::Int(v) => Ok(v),
        ConstValue::Ratio(_) => Err(Diagnostic::error(
            format!("type mismatch: {what} must be an integer, found a ratio"),
            op.span(),
        )
        .with_label("a ratio")
        .with_hint("decimals such as `0.345` are ratios; write a whole number here")),
    }
}

/// An operand that must be a ratio (a match threshold).
pub fn ratio_operand(op: &Operand, globals: &Globals) -> Result<Ratio, Diagnostic> {
    match operand_value(op, globals)? {
        ConstValue::Ratio(r) => Ok(r),
        ConstValue::Int(v) => Err(Diagnostic::error(
            "type mismatch: a match threshold must be a ratio, found an integer",
            op.span(),
        )
        .with_label(format!("the integer {v}"))
        .with_hint("write the threshold as a decimal between 0 and 1, e.g. `0.345`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_become_reduced_exact_ratios() {
        assert_eq!(parse_decimal("0.345"), Some(Ratio { num: 69, den: 200 }));
        assert_eq!(parse_decimal("0.375"), Some(Ratio { num: 3, den: 8 }));
        assert_eq!(parse_decimal("1.0"), Some(Ratio { num: 1, den: 1 }));
        assert_eq!(parse_decimal("0.0"), Some(Ratio { num: 0, den: 1 }));
        assert_eq!(parse_decimal("0.1234567890123456789"), None);
    }

    #[test]
    fn ratios_above_one_and_huge_integers_are_errors() {
        let lit = |kind| Literal {
            kind,
            span: crate::syntax::Span::new(0, 3),
        };
        assert!(literal_value(&lit(LitKind::Decimal("1.5".into())))
            .unwrap_err()
            .message
            .contains("greater than 1"));
        assert!(literal_value(&lit(LitKind::Int("99999999999999999999".into()))).is_err());
        assert!(matches!(
            literal_value(&lit(LitKind::Int("42".into()))),
            Ok(ConstValue::Int(42))
        ));
    }
}
