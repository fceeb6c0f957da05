/** \file
 * TE_API: marks te's public API, the only symbols libte and libte_runtime export.
 *
 * Both libraries are compiled with -fvisibility=hidden (and inline functions hidden), so
 * a class or function that is not marked stays inside the library: internal helpers do
 * not clash with a user's symbols, the dynamic symbol table stays small and loading is
 * fast. Every class and non-inline, non-template function declared in include/te/ carries
 * TE_API:
 *
 *     class TE_API Module { ... };
 *     TE_API Module build(const LoweredFunc& func, const BuildOptions& options = {});
 *
 * Header-only code (templates, inline functions, include/te/ops) needs no mark. Code in
 * src/ is internal and unmarked; a test that needs an internal function tests it through
 * the public API instead, or the function moves to a public header.
 *
 * The same mark serves when building the libraries and when using them: on ELF
 * platforms a default-visibility declaration both exports a definition and imports a
 * reference. Plain C, as te/runtime/c_runtime_api.h includes it. */
#ifndef TE_EXPORT_H_
#define TE_EXPORT_H_

#if defined(__GNUC__) || defined(__clang__)
/** Exports a class or function from libte / libte_runtime (default ELF visibility). */
#define TE_API __attribute__((visibility("default")))
#else
/** Exports a class or function (nothing to do on this compiler). */
#define TE_API
#endif

#endif /* TE_EXPORT_H_ */
