//! The errors of opening a series source ([`SeriesError`]), each one line naming the input.

/// Errors opening a series source. Each displays as one line naming the input and the problem.
#[derive(Debug, thiserror::Error)]
pub enum SeriesError {
    #[error("series file '{path}': no such file")]
    NotFound { path: String },
    #[error("series file '{path}': {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("series file '{path}': empty (no header)")]
    Empty { path: String },
    #[error("series file '{path}': no numeric value column (header: {header})")]
    NoNumericColumn { path: String, header: String },
    #[error("series file '{path}': no column '{key}' to split the rows by (header: {header})")]
    NoKeyColumn {
        path: String,
        key: String,
        header: String,
    },
    #[error("series file '{path}': no data rows (header: {header})")]
    NoRows { path: String, header: String },
    #[error("series file '{path}' line {line}: {problem}")]
    Row {
        path: String,
        line: u64,
        problem: String,
    },
    /// A network source: a bad URL or option, a socket that cannot be bound (one line naming
    /// the source).
    #[error("{0}")]
    Net(String),
    #[error("synthetic series: {0}")]
    Synthetic(String),
    #[error("{label}: cannot start the producer thread: {source}")]
    Spawn {
        label: String,
        #[source]
        source: std::io::Error,
    },
}
