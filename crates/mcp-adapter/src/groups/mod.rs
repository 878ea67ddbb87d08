//! The tool groups this build serves. Each group lives in its own module and is listed here once; a
//! group whose crate has not landed is simply absent (its tools are never stubbed).

pub mod hours;
pub mod shiftwork;
pub(crate) mod worklog;

use crate::registry::Group;

pub mod contracts;

/// The groups built into this binary, in `tools/list` order.
pub fn all() -> Vec<&'static Group> {
    vec![
        &shiftwork::GROUP,
        &worklog::GROUP,
        &contracts::GROUP,
        &hours::GROUP,
    ]
}
