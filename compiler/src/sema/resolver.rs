//! The resolver's state: the names in scope while a reveal's expression is checked. Its methods
//! live with what they check: expressions in [`super::expr`], binders in [`super::binders`].

use super::names::Globals;
use super::program::*;
use crate::syntax::ast::Ident;

/// A name in scope: field `field` of binder `binder`.
#[derive(Debug, Clone)]
pub struct Local {
    pub name: Ident,
    pub binder: BinderId,
    pub field: usize,
    /// Set when the body mentions it; an unused binder is almost always a mistake.
    pub used: bool,
}

pub struct Resolver<'a, 'm> {
    pub globals: &'a Globals<'m>,
    /// `None` for an input whose declaration had errors (already reported).
    pub inputs: &'a [Option<Input>],
    /// The program's binder table, shared by all reveals.
    pub binders: Vec<Binder>,
    pub(super) scope: Vec<Local>,
    /// Scope entries below this index are outside the `let` being expanded: invisible.
    pub(super) barrier: usize,
    /// `let` names being expanded, to report `let a = b; let b = a;` instead of looping.
    pub(super) expanding: Vec<String>,
}

/// What a reveal's value is: its shape, its record binder for `ids`/`count`, and the value.
pub struct RevealValue {
    pub shape: RevealShape,
    pub records: Option<BinderId>,
    pub value: BoolExpr,
    /// The `let` named by the reveal (`reveal dup to p0;`), for the default output name.
    pub let_name: Option<String>,
}

impl<'a, 'm> Resolver<'a, 'm> {
    pub fn new(globals: &'a Globals<'m>, inputs: &'a [Option<Input>]) -> Self {
        Resolver {
            globals,
            inputs,
            binders: Vec::new(),
            scope: Vec::new(),
            barrier: 0,
            expanding: Vec::new(),
        }
    }
}
