//! The page's files: found at start, read from disk on every request.
//!
//! The page lives in the repository's `client/web` directory: index.html,
//! its own modules and styles, and `node_modules/` that `npm ci` fills
//! with xterm.js and its addons. Nothing of it is compiled into the binary,
//! so building needs no npm. The directory is `--assets DIR` when given;
//! otherwise the first of these that holds an index.html:
//!
//! - `web/` beside the executable, and `../share/panehost/web` from it (an
//!   installed layout);
//! - `../../client/web` from it (the executable of a cargo build, in
//!   `target/debug` or `target/release`);
//! - the crate's own `web/` directory as it was when this was built.
//!
//! When the directory or the npm packages are missing, the page answers a
//! 500 that says which and how to fix it.

use axum::body::Body;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use std::path::{Path, PathBuf};

/// The packages' files the page loads, as `/vendor/{name}`.
const VENDOR: &[(&str, &str)] = &[
    ("xterm.mjs", "node_modules/@xterm/xterm/lib/xterm.mjs"),
    ("xterm.css", "node_modules/@xterm/xterm/css/xterm.css"),
    ("addon-fit.mjs", "node_modules/@xterm/addon-fit/lib/addon-fit.mjs"),
    ("addon-serialize.mjs", "node_modules/@xterm/addon-serialize/lib/addon-serialize.mjs"),
];

/// Where the page's files are, if anywhere.
#[derive(Debug, Clone)]
pub(super) struct Assets {
    dir: Option<PathBuf>,
    searched: Vec<PathBuf>,
}

impl Assets {
    /// `explicit`, or the first candidate directory that holds index.html.
    pub(super) fn locate(explicit: Option<&Path>) -> Assets {
        let candidates = match explicit {
            Some(dir) => vec![dir.to_path_buf()],
            None => default_candidates(),
        };
        let dir = candidates.iter().find(|dir| dir.join("index.html").is_file()).cloned();
        Assets { dir, searched: candidates }
    }

    /// What is missing, in a sentence, or `None` when everything is there.
    pub(super) fn problem(&self) -> Option<String> {
        let Some(dir) = &self.dir else {
            let searched: Vec<String> = self.searched.iter().map(|dir| dir.display().to_string()).collect();
            return Some(format!(
                "the web terminal's page was not found (looked for index.html in: {}); pass --assets with the \
                 client/web directory",
                searched.join(", ")
            ));
        };
        let missing: Vec<&str> =
            VENDOR.iter().filter(|(_, path)| !dir.join(path).is_file()).map(|(_, path)| *path).collect();
        if missing.is_empty() {
            None
        } else {
            Some(format!(
                "the web terminal's packages are missing from {} ({}); run `npm ci` in that directory",
                dir.display(),
                missing.join(", ")
            ))
        }
    }

    /// index.html, or the 500 page when anything the page needs is missing.
    pub(super) async fn index(&self) -> Response {
        if let Some(problem) = self.problem() {
            return missing_page(&problem);
        }
        self.serve("index.html").await
    }

    /// One of the page's own `.js` or `.css` files (a plain name, no path).
    pub(super) async fn page_file(&self, name: &str) -> Response {
        if !is_page_file_name(name) {
            return not_found();
        }
        self.serve(name).await
    }

    /// `/vendor/{name}`: a file of the npm packages.
    pub(super) async fn vendor_file(&self, name: &str) -> Response {
        match VENDOR.iter().find(|(vendor, _)| *vendor == name) {
            Some((_, path)) => self.serve(path).await,
            None => not_found(),
        }
    }

    async fn serve(&self, relative: &str) -> Response {
        let Some(dir) = &self.dir else {
            return missing_page(&self.problem().unwrap_or_default());
        };
        match tokio::fs::read(dir.join(relative)).await {
            Ok(bytes) => {
                let mut response = Response::new(Body::from(bytes));
                response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type(relative)));
                response
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                if relative.starts_with("node_modules/") {
                    missing_page(&self.problem().unwrap_or_else(|| format!("{relative} is missing")))
                } else {
                    not_found()
                }
            }
            Err(error) => {
                tracing::warn!(file = relative, %error, "cannot read a page file");
                let mut response = Response::new(Body::from(format!("cannot read {relative}: {error}\n")));
                *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
                response
            }
        }
    }
}

fn default_candidates() -> Vec<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(bin) = std::env::current_exe().ok().and_then(|exe| exe.parent().map(Path::to_path_buf)) {
        candidates.push(bin.join("web"));
        candidates.push(bin.join("../share/panehost/web"));
        candidates.push(bin.join("../../client/web"));
    }
    candidates.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("web"));
    candidates
}

/// `app.js`, `style.css`: lowercase letters, digits, `-` and `_`, then
/// `.js` or `.css`; never a path.
fn is_page_file_name(name: &str) -> bool {
    let Some(stem) = name.strip_suffix(".js").or_else(|| name.strip_suffix(".css")) else {
        return false;
    };
    !stem.is_empty() && stem.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next() {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        _ => "application/octet-stream",
    }
}

fn not_found() -> Response {
    let mut response = Response::new(Body::from("404 Not Found\n"));
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}

/// A 500 page that says what is missing.
fn missing_page(problem: &str) -> Response {
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>panehost web: page files missing</title>\
         </head>\n<body><h1>The web terminal cannot load</h1>\n<p>{}.</p>\n<p>The page's scripts come from npm \
         packages that are installed next to it, not built into panehost: run <code>npm ci</code> in \
         <code>client/web</code>, or start <code>panehost web --assets DIR</code> with a directory that holds \
         them.</p></body></html>\n",
        escape_html(problem)
    );
    let mut response = Response::new(Body::from(html));
    *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    response
}

fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("panehost-web-assets-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn page_file_names_are_plain() {
        assert!(is_page_file_name("app.js"));
        assert!(is_page_file_name("style.css"));
        assert!(is_page_file_name("resume-store.js"));
        assert!(!is_page_file_name("../secret.js"));
        assert!(!is_page_file_name("index.html"));
        assert!(!is_page_file_name(".js"));
        assert!(!is_page_file_name("App.js"));
    }

    #[test]
    fn a_missing_directory_or_missing_packages_are_named() {
        let empty = scratch("empty");
        let assets = Assets::locate(Some(&empty));
        assert!(assets.problem().unwrap().contains("index.html"));

        std::fs::write(empty.join("index.html"), "<!doctype html>").unwrap();
        let assets = Assets::locate(Some(&empty));
        let problem = assets.problem().unwrap();
        assert!(problem.contains("npm ci") && problem.contains("@xterm/xterm"), "{problem}");

        for (_, path) in VENDOR {
            let file = empty.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, "").unwrap();
        }
        assert_eq!(Assets::locate(Some(&empty)).problem(), None);
        let _ = std::fs::remove_dir_all(&empty);
    }

    #[tokio::test]
    async fn missing_packages_answer_500() {
        let dir = scratch("no-packages");
        std::fs::write(dir.join("index.html"), "<!doctype html>").unwrap();
        let assets = Assets::locate(Some(&dir));
        assert_eq!(assets.index().await.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(assets.vendor_file("xterm.mjs").await.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(assets.vendor_file("other.mjs").await.status(), StatusCode::NOT_FOUND);
        assert_eq!(assets.page_file("nothing.js").await.status(), StatusCode::NOT_FOUND);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
