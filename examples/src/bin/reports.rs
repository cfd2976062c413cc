//! `reports`: long jobs as MCP tasks. `sales_report` builds a year's report month by month (a
//! task when the client takes one, a plain call otherwise); `purge_reports` runs only as a
//! task and asks the user to confirm halfway, while it runs.
//!
//! Tasks are kept in memory unless the server is started with `--task-store redis://…`
//! (`MCP_TOOL_TASK_STORE`): then every replica sees every task, and results outlive a restart.

use std::sync::Mutex;
use std::time::Duration;

use mcp_tool::extract::{CancellationToken, Elicitation, Progress};
use mcp_tool::prelude::*;

/// One month of sales.
#[derive(Serialize, JsonSchema)]
struct Month {
    /// 1 to 12
    month: u8,
    /// Revenue in cents
    revenue_cents: u64,
    /// Number of orders
    orders: u32,
}

/// A year's sales, month by month.
#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct SalesReport {
    year: u16,
    months: Vec<Month>,
    total_revenue_cents: u64,
    total_orders: u32,
}

/// The sales of one month: made up, but the same every time.
fn month_of(year: u16, month: u8) -> Month {
    let seed = u64::from(year) * 31 + u64::from(month) * 7;
    let orders = u32::try_from(100 + (seed * 2_654_435_761) % 400).unwrap_or(100);
    Month {
        month,
        revenue_cents: u64::from(orders) * (1_500 + (seed % 900)),
        orders,
    }
}

/// Whether to go ahead.
#[derive(Deserialize, JsonSchema)]
struct Confirm {
    /// Purge the reports?
    confirm: bool,
}

/// The reports built so far.
#[derive(Default)]
struct Reports {
    built: Mutex<Vec<u16>>,
}

#[tools]
impl Reports {
    /// Build the sales report of a year, month by month (a few seconds; runs as a task when
    /// the client can take one).
    #[tool(read_only, idempotent, open_world = false, task = "optional")]
    async fn sales_report(
        &self,
        #[arg(description = "The year, 2000-2100")] year: u16,
        #[arg(description = "Milliseconds spent on each month (0-2000, default 250)")]
        pace_ms: Option<u64>,
        progress: Progress,
        cancel: CancellationToken,
    ) -> Result<Json<SalesReport>, ToolError> {
        if !(2000..=2100).contains(&year) {
            return Err(
                ToolError::new("OUT_OF_RANGE", format!("no sales in {year}"))
                    .suggestion("ask for a year from 2000 to 2100"),
            );
        }
        let pace = Duration::from_millis(pace_ms.unwrap_or(250).min(2000));
        let mut months = Vec::with_capacity(12);
        for month in 1..=12_u8 {
            tokio::time::sleep(pace).await;
            if cancel.is_cancelled() {
                return Err(ToolError::new("CANCELLED", "the report was cancelled"));
            }
            months.push(month_of(year, month));
            progress.report(f64::from(month), 12.0, &format!("month {month} of 12"));
        }
        self.built.lock().expect("reports lock").push(year);
        Ok(Json(SalesReport {
            year,
            total_revenue_cents: months.iter().map(|m| m.revenue_cents).sum(),
            total_orders: months.iter().map(|m| m.orders).sum(),
            months,
        }))
    }

    /// Purge every report built so far, after the user confirms (runs only as a task).
    #[tool(destructive, idempotent, open_world = false, task = "required")]
    async fn purge_reports(&self, ctx: Ctx, progress: Progress) -> Result<String, ToolError> {
        // Counting first; the question comes once the call runs as a task.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let count = self.built.lock().expect("reports lock").len();
        progress.report(1.0, 2.0, &format!("{count} reports found"));
        let question = format!("Purge {count} reports?");
        match ctx.elicit::<Confirm>(question).await? {
            Elicitation::Accept(Confirm { confirm: true }) => {
                self.built.lock().expect("reports lock").clear();
                progress.report(2.0, 2.0, "purged");
                Ok(format!("purged {count} reports"))
            }
            _ => Ok("nothing was purged".into()),
        }
    }
}

fn main() -> mcp_tool::Result<()> {
    Server::new("reports", env!("CARGO_PKG_VERSION"))
        .title("Sales reports")
        .service(Reports::default())
        .run()
}
