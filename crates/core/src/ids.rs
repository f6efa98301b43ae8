//! Identifiers. Approval ids are 128 random bits so that nobody can guess one.

/// A new approval id: 128 bits from the OS-seeded generator, as 32 hex digits.
pub fn new_approval_id() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// A new internal id for tool calls and the like (also random, shorter prefix for readability).
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}_{:024x}", rand::random::<u128>() >> 32)
}
