//! The tasks of a [`MemoryStore`]: a map behind one mutex, gone with the store.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::MemoryStore;
use crate::error::StoreError;
use crate::model::EpochMs;
use crate::store::epoch_ms;
use crate::tasks::{TaskRecord, TaskStatus, TaskStep, TaskStore};

/// The tasks by id.
#[derive(Default)]
pub(super) struct Tasks(Mutex<BTreeMap<String, TaskRecord>>);

impl Tasks {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, TaskRecord>> {
        // Every change replaces a whole record before the guard drops.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl TaskStore for MemoryStore {
    fn create_task(&self, task: &TaskRecord) -> Result<(), StoreError> {
        let mut tasks = self.tasks.lock();
        if tasks.contains_key(&task.task_id) {
            return Err(StoreError::io(String::from("a task with this id exists already")));
        }
        tasks.insert(task.task_id.clone(), task.clone());
        Ok(())
    }

    fn get_task(&self, task_id: &str) -> Result<Option<TaskRecord>, StoreError> {
        Ok(self.tasks.lock().get(task_id).cloned())
    }

    fn update_task(&self, task_id: &str, step: TaskStep<'_>) -> Result<Option<TaskRecord>, StoreError> {
        let now = epoch_ms(self.clock.as_ref());
        let mut tasks = self.tasks.lock();
        let Some(current) = tasks.get(task_id) else {
            return Ok(None);
        };
        match step(current, now) {
            Some(next) => {
                tasks.insert(task_id.to_owned(), next.clone());
                Ok(Some(next))
            }
            None => Ok(Some(current.clone())),
        }
    }

    fn adopt_tasks(
        &self,
        runner: &str,
        now: EpochMs,
        until: EpochMs,
        max: usize,
    ) -> Result<Vec<TaskRecord>, StoreError> {
        let mut tasks = self.tasks.lock();
        let mut orphans: Vec<(EpochMs, String)> = tasks
            .values()
            .filter(|t| t.status == TaskStatus::Working && t.runner_until <= now)
            .map(|t| (t.runner_until, t.task_id.clone()))
            .collect();
        orphans.sort();
        let mut adopted = Vec::new();
        for (_, id) in orphans.into_iter().take(max) {
            if let Some(task) = tasks.get_mut(&id) {
                *task = task.clone().run_by(runner, until);
                adopted.push(task.clone());
            }
        }
        Ok(adopted)
    }

    fn renew_tasks(&self, runner: &str, until: EpochMs) -> Result<u64, StoreError> {
        let mut renewed = 0;
        for task in self.tasks.lock().values_mut() {
            if task.status == TaskStatus::Working && task.runner.as_deref() == Some(runner) {
                task.runner_until = until;
                renewed += 1;
            }
        }
        Ok(renewed)
    }

    fn purge_tasks(&self, now: EpochMs, max: usize) -> Result<u64, StoreError> {
        let mut tasks = self.tasks.lock();
        let expired: Vec<String> = tasks
            .values()
            .filter(|t| t.is_expired(now))
            .take(max)
            .map(|t| t.task_id.clone())
            .collect();
        for id in &expired {
            tasks.remove(id);
        }
        Ok(expired.len() as u64)
    }
}
