//! CT-176: every scenario of §11 through the library, on every store; after each scenario the store's
//! integrity check is clean (CT-27, CT-79).

use crate::scenarios::{self, Ctx};
use crate::support::{Library, store, store_kinds};

#[test]
fn ct176_every_scenario_on_every_store() {
    for (name, scenario) in scenarios::all() {
        for kind in store_kinds() {
            let fx = scenarios::fixture();
            let store = store(kind, &fx.clock);
            let mut lib = Library::new(&store.store, &fx.fs);
            let mut ctx = Ctx::new(&mut lib, &fx);
            eprintln!("{name} on {}", store.name);
            scenario(&mut ctx);
            let report = store.store.check_integrity().unwrap();
            assert!(
                report.is_clean(),
                "{name} on {}: {:?}",
                store.name,
                report.violations
            );
        }
    }
}
