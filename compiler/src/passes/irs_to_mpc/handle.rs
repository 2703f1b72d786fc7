//! How `irs-to-mpc` names a value of the `@query` it builds.

/// A value of `@query`, by index (the query number is `Handle(usize::MAX)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handle(pub(super) usize);

impl Handle {
    #[cfg(test)]
    pub fn test(i: usize) -> Handle {
        Handle(i)
    }
}
