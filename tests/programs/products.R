# products.R EXPECTED: R's matrix products, which R computes with the BLAS's dgemm_ (the default
# matprod: BLAS for inputs without NaN), each checked against R's own loops
# (options(matprod = "internal"): no BLAS) with the netlib gauge
#   |C - Cref| <= 2 (k+2) eps |op(A)| |op(B)|   (NaN fails).
# Writes EXPECTED: a line "COUNT REGEX" per product, the trace line its dgemm_ call leaves
# (check_calls in common.sh reads it). Exits 1 if a product is off.
expected <- commandArgs(trailingOnly = TRUE)[1]
set.seed(52)
rmat <- function(r, c) matrix(runif(r * c, -1, 1), r, c)
a1 <- rmat(300, 200); b1 <- rmat(200, 250)
a2 <- rmat(190, 310); b2 <- rmat(190, 240)
a3 <- rmat(290, 180); b3 <- rmat(230, 180)
a4 <- rmat(300, 180); b4 <- rmat(170, 260)
# Each product: the call, op(A) and op(B) for the reference, and the dgemm_ call it makes
# (R is column-major: traced as made).
cases <- list(
  list(name = "A %*% B", f = function() a1 %*% b1, opa = a1, opb = b1, call = "NN m=300 n=250 k=200"),
  list(name = "crossprod(A, B)", f = function() crossprod(a2, b2), opa = t(a2), opb = b2,
       call = "TN m=310 n=240 k=190"),
  list(name = "tcrossprod(A, B)", f = function() tcrossprod(a3, b3), opa = a3, opb = t(b3),
       call = "NT m=290 n=230 k=180"),
  list(name = "A[6:265, 8:147] %*% B[4:143, 12:221]", f = function() a4[6:265, 8:147] %*% b4[4:143, 12:221],
       opa = a4[6:265, 8:147], opb = b4[4:143, 12:221], call = "NN m=260 n=210 k=140"))
options(matprod = "default")
got <- lapply(cases, function(cs) cs$f())
options(matprod = "internal")
failed <- 0
for (i in seq_along(cases)) {
  cs <- cases[[i]]
  ref <- cs$opa %*% cs$opb
  tol <- 2 * (ncol(cs$opa) + 2) * .Machine$double.eps * (abs(cs$opa) %*% abs(cs$opb))
  off <- !(abs(got[[i]] - ref) <= tol)
  if (!identical(dim(got[[i]]), dim(ref)) || any(off)) {
    cat(sprintf("FAIL %s: %d entries off the gauge\n", cs$name, sum(off)))
    failed <- failed + 1
  } else {
    cat(sprintf("ok   %s: max |C - Cref| / tolerance = %.3g\n", cs$name, max(abs(got[[i]] - ref) / tol)))
  }
}
writeLines(sprintf("1 ^fastgemm: dgemm_ %s ", sapply(cases, function(cs) cs$call)), expected)
cat(sprintf("%s: %s\n", R.version.string,
            if (failed) sprintf("FAILED (%d)", failed) else "all products within the gauge"))
quit(status = if (failed) 1 else 0)
