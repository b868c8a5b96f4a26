//! The job queue's schema, embedded in the binary and applied with sqlx's migrator
//! (which records what it applied in `_sqlx_migrations`, under an advisory lock, so
//! workers starting together apply each migration once).

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;

use sqlx::error::BoxDynError;
use sqlx::migrate::{Migration, MigrationSource, MigrationType, Migrator};

/// Every migration, in order: (version, description, SQL).
const MIGRATIONS: &[(i64, &str, &str)] =
    &[(1, "jobs", include_str!("../migrations/0001_jobs.sql"))];

#[derive(Debug)]
struct Embedded;

impl<'s> MigrationSource<'s> for Embedded {
    fn resolve(
        self,
    ) -> Pin<Box<dyn Future<Output = Result<Vec<Migration>, BoxDynError>> + Send + 's>> {
        Box::pin(async {
            Ok(MIGRATIONS
                .iter()
                .map(|&(version, description, sql)| {
                    Migration::new(
                        version,
                        Cow::Borrowed(description),
                        MigrationType::Simple,
                        Cow::Borrowed(sql),
                        false,
                    )
                })
                .collect())
        })
    }
}

/// The migrator for the queue's schema.
pub async fn migrator() -> Result<Migrator, sqlx::migrate::MigrateError> {
    Migrator::new(Embedded).await
}
