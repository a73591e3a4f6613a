/*
 * htp/abi.h — the HTP plugin C ABI.
 *
 * A plugin is a shared library exporting exactly one symbol, `htp_plugin_query`. The host calls it
 * (side-effect free) to read a static HtpPluginInfo, checks the ABI version, then calls `init` with the
 * host function table. Everything a plugin does — registering components, reporting diagnostics,
 * logging — goes through that table; a plugin never links against the host library.
 *
 * Rules that hold for every type below:
 *  - Every struct passed across the boundary starts with `size_t struct_size` (sizeof as the plugin
 *    compiled it). The host validates it, copies min(struct_size, its own size) and zero-fills the rest,
 *    so a plugin built for an older minor version reads new fields as zero.
 *  - Strings are borrowed HtpStr {ptr,len} UTF-8 views, valid for the duration of the call only; the
 *    receiver deep-copies what it keeps. ptr may be NULL when len is 0.
 *  - Every callback returns an HtpStatus and never lets a C++ exception escape (plugin.hpp's guards).
 *  - ABI compatibility: the host loads a plugin when the majors are equal and the plugin's minor is
 *    less than or equal to the host's minor. Fields are only ever appended within a major version.
 */
#ifndef HTP_ABI_H
#define HTP_ABI_H

#include <stddef.h>
#include <stdint.h>

#include <dlpack/dlpack.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Versioning ------------------------------------------------------------------------------ */

/** ABI major version: a plugin with a different major is refused. */
#define HTP_ABI_MAJOR 1u
/** ABI minor version: 1.1 appended plugin descriptions, AST access, pass bodies and patterns, scanners;
 *  1.2 appended running packages (HtpBindingDesc.run, HtpRunRequest, DLPack tensors);
 *  1.3 appended one-callback patterns (HtpPatternDesc.match_and_rewrite);
 *  1.4 appended a pass's finishing body (HtpPassDesc.finish), run after its patterns. */
#define HTP_ABI_MINOR 5u

/** Marks the plugin entry symbol for export; everything else in a plugin stays hidden. */
#if defined(_WIN32)
#define HTP_PLUGIN_EXPORT __declspec(dllexport)
#else
#define HTP_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/** Name of the single symbol every plugin exports. */
#define HTP_PLUGIN_QUERY_SYMBOL "htp_plugin_query"

/* ---- Basic types ----------------------------------------------------------------------------- */

/** A borrowed UTF-8 string view; not NUL-terminated in general. */
typedef struct HtpStr {
  const char *ptr; /**< First byte, or NULL when len == 0. */
  size_t len;      /**< Length in bytes. */
} HtpStr;

/** A borrowed array of strings. */
typedef struct HtpStrList {
  const HtpStr *items; /**< First element, or NULL when count == 0. */
  size_t count;        /**< Number of elements. */
} HtpStrList;

/** Result of every call across the boundary. */
typedef int32_t HtpStatus;
enum {
  HTP_OK = 0,                   /**< Success. */
  HTP_ERR = 1,                  /**< Failure already described by a diagnostic. */
  HTP_ERR_INVALID_ARGUMENT = 2, /**< A malformed argument or descriptor. */
  HTP_ERR_NOT_FOUND = 3,        /**< A named entity does not exist. */
  HTP_ERR_UNSUPPORTED = 4,      /**< The request is valid but not supported by the callee. */
  HTP_ERR_INTERNAL = 5          /**< An unexpected failure (e.g. an exception caught at the boundary). */
};

/** Log levels, ordered by severity. */
typedef int32_t HtpLogLevel;
enum {
  HTP_LOG_TRACE = 0,
  HTP_LOG_DEBUG = 1,
  HTP_LOG_INFO = 2,
  HTP_LOG_WARN = 3,
  HTP_LOG_ERROR = 4
};

/** Diagnostic severities. */
typedef int32_t HtpSeverity;
enum { HTP_SEV_NOTE = 0, HTP_SEV_WARNING = 1, HTP_SEV_ERROR = 2 };

/** A source range; lines are 1-based, columns 0-based UTF-8 byte offsets (as Python's ast). */
typedef struct HtpSpan {
  HtpStr file;       /**< Source file name; empty when unknown. */
  uint32_t line;     /**< First line, 0 when unknown. */
  uint32_t col;      /**< First column. */
  uint32_t end_line; /**< Last line (inclusive). */
  uint32_t end_col;  /**< Column one past the end on end_line. */
} HtpSpan;

/** A diagnostic a plugin reports. */
typedef struct HtpDiagnostic {
  size_t struct_size;   /**< sizeof(HtpDiagnostic) as compiled by the reporter. */
  HtpSeverity severity; /**< Note, warning or error. */
  HtpStr code;          /**< Stable machine-readable code, e.g. "wsp.arity"; may be empty. */
  HtpStr message;       /**< Human-readable message, one sentence, no trailing newline. */
  HtpSpan span;         /**< Where it applies; zero when it has no location. */
} HtpDiagnostic;

/** Opaque per-plugin host context; passed back to every host function. */
typedef struct HtpHost HtpHost;
/** Opaque diagnostic sink owned by the host for the duration of one call. */
typedef struct HtpDiag HtpDiag;

/* ---- AST handles (ABI 1.1) -------------------------------------------------------------------- */

/** A node of the host AST (a faithful image of Python 3.11's ast); owned by the host. */
typedef struct HtpNode HtpNode;
/** One compile unit: the tree, module-level attributes, and nodes detached during a pass. */
typedef struct HtpModule HtpModule;
/** One invocation of a pass or scanner: the module, diagnostics, options, package output. */
typedef struct HtpPassContext HtpPassContext;

/** What an HtpConstant holds (everything Python's ast.Constant can). */
typedef int32_t HtpConstantKind;
enum {
  HTP_CONST_NONE = 0,
  HTP_CONST_BOOL = 1,     /**< i is 0 or 1. */
  HTP_CONST_INT = 2,      /**< i holds it. */
  HTP_CONST_BIGINT = 3,   /**< text is the decimal spelling (beyond int64). */
  HTP_CONST_FLOAT = 4,    /**< real holds it. */
  HTP_CONST_COMPLEX = 5,  /**< real and imag hold it. */
  HTP_CONST_STR = 6,      /**< text is its UTF-8 (lone surrogates as 3-byte sequences). */
  HTP_CONST_BYTES = 7,    /**< text holds the bytes. */
  HTP_CONST_ELLIPSIS = 8
};

/** A Python constant value. */
typedef struct HtpConstant {
  size_t struct_size;   /**< sizeof(HtpConstant) as compiled by the caller. */
  HtpConstantKind kind;
  int64_t i;
  double real;
  double imag;
  HtpStr text;          /**< Borrowed: valid until the node changes (reads) or for the call (writes). */
} HtpConstant;

struct HtpHostApi;

/**
 * ABI 1.5: one step of an island, an external tool a pass hands part of the program to (see
 * HtpHostApi.island_run). The host runs argv as a child process with a time limit, caches its output by
 * content hash, records command, tool version, input and output in the package under
 * ir/islands/<pass>/<name>/, and reports failures (tool missing, failed, timed out) as diagnostics: at the
 * `file:line:col` the tool's stderr names, else at `at`.
 */
typedef struct HtpIslandStep {
  size_t struct_size;  /**< sizeof(HtpIslandStep) as compiled by the caller. */
  HtpStr name;         /**< The step's record directory name, e.g. "softmax_rows.mlir-opt". */
  HtpStrList argv;     /**< argv[0] is the tool (a path or a name on PATH); "{input}" and "{output}" are files. */
  HtpStr input;        /**< Bytes given on stdin, or written to the {input} file. */
  HtpStr input_name;   /**< Record (and {input} file) name; empty: "input". */
  HtpStr output_name;  /**< Record (and {output} file) name; empty: "output". Without {output}, stdout. */
  uint32_t timeout_ms; /**< 0: 120 000. */
  HtpSpan at;          /**< The matched node's span: where errors go when the tool names no location. */
  HtpStr package;      /**< The Debian package that provides the tool (for the "not installed" message). */
} HtpIslandStep;

/** What a pattern's match_and_rewrite returns. */
typedef int32_t HtpRewriteResult;
enum {
  HTP_REWRITE_NO_MATCH = 0, /**< The pattern does not apply here; the tree is unchanged. */
  HTP_REWRITE_APPLIED = 1,  /**< The pattern rewrote the tree through the host's edit calls. */
  HTP_REWRITE_FAILED = -1   /**< An error, reported into the pass's sink; the driver stops. */
};

/**
 * A rewrite pattern: the host's worklist driver offers it the nodes of its root types (every node at
 * first, then the nodes the edits of earlier rewrites created, changed or re-parented, and their
 * parents) and applies it where it matches, to a fixpoint (deterministic order, iteration bound).
 * A pattern is either one match_and_rewrite callback (ABI 1.3) or the pair match + apply (ABI 1.1).
 */
typedef struct HtpPatternDesc {
  size_t struct_size;      /**< sizeof(HtpPatternDesc) as compiled by the plugin. */
  HtpStr name;             /**< Name for traces and diagnostics, e.g. "fold-constant-add". */
  HtpStrList root_types;   /**< Node type names it can match at ("Call", "BinOp"); empty = every node. */
  int32_t benefit;         /**< Patterns with a higher benefit are tried first. */
  /** Returns 1 when the pattern applies at `node`, 0 otherwise; must not change the tree. */
  int32_t (*match)(void *user_data, const struct HtpHostApi *api, HtpPassContext *ctx, const HtpNode *node);
  /** Rewrites at `node` after match returned 1; HTP_OK, or an error reported into the pass's sink. */
  HtpStatus (*apply)(void *user_data, const struct HtpHostApi *api, HtpPassContext *ctx, HtpNode *node);
  void *user_data;         /**< Passed back to match and apply. */
  /* ABI 1.3 */
  /** Matches at `node` and, when it applies, rewrites there in the same call (so the match is computed
   *  once): HTP_REWRITE_APPLIED, HTP_REWRITE_NO_MATCH (the tree must be unchanged) or HTP_REWRITE_FAILED.
   *  When set, match and apply may be NULL and are not called. */
  HtpRewriteResult (*match_and_rewrite)(void *user_data, const struct HtpHostApi *api, HtpPassContext *ctx,
                                        HtpNode *node);
} HtpPatternDesc;

/* ---- Component descriptors ------------------------------------------------------------------- */

/** The seven component kinds. */
typedef int32_t HtpComponentKind;
enum {
  HTP_KIND_DIALECT = 0,
  HTP_KIND_INTRINSIC_SET = 1,
  HTP_KIND_LAYOUT = 2,
  HTP_KIND_PASS = 3,
  HTP_KIND_PIPELINE = 4,
  HTP_KIND_BACKEND = 5,
  HTP_KIND_BINDING = 6
};

/**
 * Fields every component shares. Frozen for ABI major 1: new common fields are appended to each kind
 * descriptor instead. Capability lists hold text in the capability grammar (docs/capabilities.md),
 * e.g. "Backend.PTO(variant=a2a3sim)" or "?IR.TaskGraph" for an optional requirement.
 */
typedef struct HtpComponentInfo {
  HtpStr id;            /**< Unique across every loaded plugin, e.g. "wsp.build-task-graph". */
  HtpStr version;       /**< Semantic version of the component, e.g. "1.2.0". */
  HtpStr summary;       /**< One line shown by `plugins inspect`. */
  HtpStrList provides;  /**< Capabilities this component makes true when selected. */
  HtpStrList requirements; /**< Capabilities that must hold before this component runs or is selected. */
  HtpStrList conflicts; /**< Capabilities that must not hold together with this component. */
  HtpStrList accepts;   /**< Program obligations (Uses.*) this component can honour. */
} HtpComponentInfo;

/** A programming model: surface names for the frontend plus the obligations its programs raise. */
typedef struct HtpDialectDesc {
  size_t struct_size;   /**< sizeof(HtpDialectDesc) as compiled by the plugin. */
  HtpComponentInfo info;
  HtpStr name;          /**< Dialect name: Uses.Dialect(name=...) and htp.dialects.<name>. */
  HtpStrList surface;   /**< Python names this dialect exports, e.g. "workload", "P", "schedule". */
  /* ABI 1.1 */
  /** Records the obligations (Uses.*) a module raises, with spans, via obligation_add; may be NULL. */
  HtpStatus (*scan)(void *user_data, const struct HtpHostApi *api, HtpPassContext *ctx);
  void *user_data;      /**< Passed back to scan. */
} HtpDialectDesc;

/** A set of intrinsics, e.g. "pto" with ops "add", "matmul", ... */
typedef struct HtpIntrinsicSetDesc {
  size_t struct_size;   /**< sizeof(HtpIntrinsicSetDesc) as compiled by the plugin. */
  HtpComponentInfo info;
  HtpStr set;           /**< Set name: Uses.Intrinsic(set=...) and htp.intrinsics.<set>. */
  HtpStrList ops;       /**< Operation names in the set. */
} HtpIntrinsicSetDesc;

/** A layout system, e.g. "axe", with the facets it describes. */
typedef struct HtpLayoutDesc {
  size_t struct_size;   /**< sizeof(HtpLayoutDesc) as compiled by the plugin. */
  HtpComponentInfo info;
  HtpStr kind;          /**< Layout kind: Uses.Layout(kind=...). */
  HtpStrList facets;    /**< Facets it can express, e.g. "dist", "mem", "hw". */
} HtpLayoutDesc;

/** Pass stages, in pipeline order. */
typedef int32_t HtpPassStage;
enum {
  HTP_STAGE_CANONICALIZE = 0,
  HTP_STAGE_ANALYZE = 1,
  HTP_STAGE_TYPECHECK = 2,
  HTP_STAGE_SCHEDULE = 3,
  HTP_STAGE_LOWER = 4,
  HTP_STAGE_EMIT = 5,
  HTP_STAGE_PACKAGE = 6
};

/** A transformation or analysis over a module. */
typedef struct HtpPassDesc {
  size_t struct_size;      /**< sizeof(HtpPassDesc) as compiled by the plugin. */
  HtpComponentInfo info;
  HtpPassStage stage;      /**< Stage the pass belongs to; orders passes before requires/provides. */
  HtpStrList applies_to;   /**< The pass is selected when all of these hold for the program/target. */
  HtpStrList invalidates;  /**< Facts this pass makes false when it runs. */
  HtpStrList before;       /**< Pass ids this pass must run before (when both are selected). */
  HtpStrList after;        /**< Pass ids this pass must run after (when both are selected). */
  /* ABI 1.1 */
  /** Whole-module pass body; NULL when the pass is only its patterns. Runs before the patterns. */
  HtpStatus (*run)(void *user_data, const struct HtpHostApi *api, HtpPassContext *ctx);
  void *user_data;                 /**< Passed back to run. */
  const HtpPatternDesc *patterns;  /**< Rewrite patterns the host drives to a fixpoint; may be NULL. */
  size_t pattern_count;            /**< Number of patterns. */
  /* ABI 1.4 */
  /** Whole-module body run after the patterns reached their fixpoint (e.g. to assemble what they
   *  produced per node into a module attribute); NULL for none. Gets user_data like run. */
  HtpStatus (*finish)(void *user_data, const struct HtpHostApi *api, HtpPassContext *ctx);
} HtpPassDesc;

/** A pipeline template: the passes a target needs, in addition to every pass that applies. */
typedef struct HtpPipelineDesc {
  size_t struct_size;   /**< sizeof(HtpPipelineDesc) as compiled by the plugin. */
  HtpComponentInfo info;
  HtpStrList targets;   /**< Targets this pipeline compiles for, e.g. "pto-a2a3sim". */
  HtpStrList passes;    /**< Pass ids the template always includes. */
} HtpPipelineDesc;

/** A code generator for one or more targets. */
typedef struct HtpBackendDesc {
  size_t struct_size;   /**< sizeof(HtpBackendDesc) as compiled by the plugin. */
  HtpComponentInfo info;
  HtpStrList targets;   /**< Targets it generates code for. */
  int32_t priority;     /**< Higher wins when several backends claim a target; ties are errors. */
} HtpBackendDesc;

/* ---- ABI 1.2: running packages ---------------------------------------------------------------- */

/** One argument of an entrypoint, in the order of the entry's parameters in the package manifest. */
typedef struct HtpRunArg {
  size_t struct_size; /**< sizeof(HtpRunArg) as compiled by the host. */
  HtpStr name;        /**< Parameter name. */
  /** Tensor parameters: host memory (kDLCPU), C-contiguous (strides NULL), shape and dtype checked by the
   *  host against the manifest. `out` and `inout` tensors are written in place. NULL for scalars. */
  DLTensor *tensor;
  int64_t scalar_int;   /**< Integer and boolean scalars. */
  double scalar_float;  /**< Floating-point scalars. */
} HtpRunArg;

/** What the host asks a binding to run. Everything is borrowed for the duration of the call. */
typedef struct HtpRunRequest {
  size_t struct_size;   /**< sizeof(HtpRunRequest) as compiled by the host. */
  HtpStr package_dir;   /**< The package; its manifest and file hashes were verified by the host. */
  HtpStr target;        /**< The package's target, e.g. "pto-a2a3sim". */
  HtpStr entry;         /**< Entrypoint name (from the manifest's entrypoints). */
  const HtpRunArg *args; /**< Arguments in parameter order. */
  size_t arg_count;      /**< Number of arguments. */
  HtpStr cache_dir;     /**< Content-hash build cache shared by packages (exists, writable). */
  HtpStr run_dir;       /**< Directory for this run's outputs (exists): the binding writes report.json
                             (htp.run.v1) there, plus logs and traces it names in the report. */
  HtpStr options_json;  /**< JSON object of binding options (`--option K=JSON`), "{}" when none. */
} HtpRunRequest;

/** A build/load/run adapter for packages of one or more targets. */
typedef struct HtpBindingDesc {
  size_t struct_size;   /**< sizeof(HtpBindingDesc) as compiled by the plugin. */
  HtpComponentInfo info;
  HtpStrList targets;   /**< Targets whose packages it can run. */
  int32_t priority;     /**< Higher wins when several bindings claim a target; ties are errors. */
  /* ABI 1.2 */
  /** Builds (if needed) and runs an entry of a package; reports problems as diagnostics into sink and
   *  returns HTP_ERR. NULL when the binding cannot run packages (compile-only). */
  HtpStatus (*run)(void *user_data, const struct HtpHostApi *api, const HtpRunRequest *request, HtpDiag *sink);
  void *user_data;      /**< Passed back to run. */
} HtpBindingDesc;

/* ---- Host function table --------------------------------------------------------------------- */

/**
 * Services the host offers a plugin. Append-only within ABI major 1: a plugin checks struct_size
 * before calling a function appended after the minor version it was built for.
 */
typedef struct HtpHostApi {
  size_t struct_size; /**< sizeof(HtpHostApi) as compiled by the host. */
  uint32_t abi_major; /**< The host's HTP_ABI_MAJOR. */
  uint32_t abi_minor; /**< The host's HTP_ABI_MINOR. */
  HtpHost *host;      /**< Context identifying the calling plugin; pass it to every function. */

  /** Writes a log line attributed to the plugin; never to stdout. */
  void (*log)(HtpHost *host, HtpLogLevel level, HtpStr message);
  /** Reports a diagnostic into a sink the host passed to the current call. */
  void (*report)(HtpHost *host, HtpDiag *sink, const HtpDiagnostic *diagnostic);
  /** Allocates host-owned memory (for data handed to the host); NULL on failure. */
  void *(*alloc)(HtpHost *host, size_t size, size_t align);
  /** Frees memory returned by alloc; NULL is ignored. */
  void (*free)(HtpHost *host, void *ptr);

  /** Registers a dialect; HTP_ERR with a diagnostic in sink when the descriptor is rejected. */
  HtpStatus (*register_dialect)(HtpHost *host, const HtpDialectDesc *desc, HtpDiag *sink);
  /** Registers an intrinsic set; as register_dialect. */
  HtpStatus (*register_intrinsic_set)(HtpHost *host, const HtpIntrinsicSetDesc *desc, HtpDiag *sink);
  /** Registers a layout system; as register_dialect. */
  HtpStatus (*register_layout)(HtpHost *host, const HtpLayoutDesc *desc, HtpDiag *sink);
  /** Registers a pass; as register_dialect. */
  HtpStatus (*register_pass)(HtpHost *host, const HtpPassDesc *desc, HtpDiag *sink);
  /** Registers a pipeline template; as register_dialect. */
  HtpStatus (*register_pipeline)(HtpHost *host, const HtpPipelineDesc *desc, HtpDiag *sink);
  /** Registers a backend; as register_dialect. */
  HtpStatus (*register_backend)(HtpHost *host, const HtpBackendDesc *desc, HtpDiag *sink);
  /** Registers a binding; as register_dialect. */
  HtpStatus (*register_binding)(HtpHost *host, const HtpBindingDesc *desc, HtpDiag *sink);

  /* ---- ABI 1.1: AST access. Reads never fail on a valid handle; a missing field reads as null/empty.
   * Strings returned by the host are borrowed: node data stays valid until the node changes; computed
   * strings (ids, JSON) until the next host call from the same thread. Node handles stay valid until
   * the module is destroyed, also after a node is detached. ---- */

  /** The kind number of a node type name ("BinOp"), or -1; stable for the process (cache it). */
  int32_t (*ast_kind_id)(HtpHost *host, HtpStr type_name);
  /** The node type name of a kind number (empty for an unknown number). */
  HtpStr (*ast_kind_name)(HtpHost *host, int32_t kind);
  /** The node's kind number. */
  int32_t (*node_kind)(HtpHost *host, const HtpNode *node);
  /** The node's source span (unknown: line 0). */
  HtpSpan (*node_span)(HtpHost *host, const HtpNode *node);
  /** The node's parent, or NULL for a root or a detached node. */
  HtpNode *(*node_parent)(HtpHost *host, const HtpNode *node);
  /** The node's stable id (symbol path + structural position), e.g. "vector_add/body[2]/value". */
  HtpStr (*node_id)(HtpHost *host, const HtpNode *node);
  /** Number of fields of the node's type (Python 3.11 grammar order). */
  size_t (*node_field_count)(HtpHost *host, const HtpNode *node);
  /** Name of field `index` of the node's type (static storage; empty when out of range). */
  HtpStr (*node_field_name)(HtpHost *host, const HtpNode *node, size_t index);
  /** The node in a node field, or NULL when null or not a node field. */
  HtpNode *(*node_child)(HtpHost *host, const HtpNode *node, HtpStr field);
  /** Length of a node-list or identifier-list field (0 when absent). */
  size_t (*node_list_size)(HtpHost *host, const HtpNode *node, HtpStr field);
  /** Entry `index` of a node-list field, or NULL (out of range, or a null entry). */
  HtpNode *(*node_list_item)(HtpHost *host, const HtpNode *node, HtpStr field, size_t index);
  /** An identifier or string field, or entry `index` of an identifier list when index != SIZE_MAX. */
  HtpStatus (*node_text)(HtpHost *host, const HtpNode *node, HtpStr field, size_t index, HtpStr *out);
  /** An integer field. */
  HtpStatus (*node_int)(HtpHost *host, const HtpNode *node, HtpStr field, int64_t *out);
  /** A constant field (Constant.value, MatchSingleton.value); out->struct_size must be set. */
  HtpStatus (*node_constant)(HtpHost *host, const HtpNode *node, HtpStr field, HtpConstant *out);
  /** A metadata attribute ("wsp.axis") as JSON text; HTP_ERR_NOT_FOUND when absent. */
  HtpStatus (*node_attr_get)(HtpHost *host, const HtpNode *node, HtpStr key, HtpStr *json_out);
  /** Sets a namespaced metadata attribute from JSON text; an error for bad JSON or an unnamespaced key. */
  HtpStatus (*node_attr_set)(HtpHost *host, HtpNode *node, HtpStr key, HtpStr json, HtpDiag *sink);

  /** A new detached node of a type (fields empty), owned by the module until inserted. */
  HtpNode *(*node_create)(HtpHost *host, HtpModule *module, HtpStr type_name, const HtpSpan *span);
  /** A detached deep copy of `node` (spans and attributes included). */
  HtpNode *(*node_clone)(HtpHost *host, HtpModule *module, const HtpNode *node);
  /** Sets a node field to a detached node (or NULL); the previous child becomes detached. */
  HtpStatus (*node_set_child)(HtpHost *host, HtpModule *module, HtpNode *node, HtpStr field, HtpNode *child,
                              HtpDiag *sink);
  /** Sets an identifier or string field. */
  HtpStatus (*node_set_text)(HtpHost *host, HtpModule *module, HtpNode *node, HtpStr field, HtpStr text,
                             HtpDiag *sink);
  /** Sets an integer field. */
  HtpStatus (*node_set_int)(HtpHost *host, HtpModule *module, HtpNode *node, HtpStr field, int64_t value,
                            HtpDiag *sink);
  /** Sets a constant field. */
  HtpStatus (*node_set_constant)(HtpHost *host, HtpModule *module, HtpNode *node, HtpStr field,
                                 const HtpConstant *value, HtpDiag *sink);
  /** Inserts a detached node at `index` (== size appends) of a node-list field. */
  HtpStatus (*node_list_insert)(HtpHost *host, HtpModule *module, HtpNode *node, HtpStr field, size_t index,
                                HtpNode *child, HtpDiag *sink);
  /** Removes entry `index` of a node-list field; the removed node becomes detached. */
  HtpStatus (*node_list_erase)(HtpHost *host, HtpModule *module, HtpNode *node, HtpStr field, size_t index,
                               HtpDiag *sink);
  /** Puts the detached node `with` where `node` is; `node` becomes detached. */
  HtpStatus (*node_replace)(HtpHost *host, HtpModule *module, HtpNode *node, HtpNode *with, HtpDiag *sink);

  /** The module's root node (a Module node). */
  HtpNode *(*module_root)(HtpHost *host, HtpModule *module);
  /** The module's source file name. */
  HtpStr (*module_file)(HtpHost *host, HtpModule *module);
  /** A module-level attribute ("wsp.task_graph") as JSON text; HTP_ERR_NOT_FOUND when absent. */
  HtpStatus (*module_attr_get)(HtpHost *host, HtpModule *module, HtpStr key, HtpStr *json_out);
  /** Sets a namespaced module-level attribute from JSON text. */
  HtpStatus (*module_attr_set)(HtpHost *host, HtpModule *module, HtpStr key, HtpStr json, HtpDiag *sink);

  /* ---- ABI 1.1: pass and scanner invocations. ---- */

  /** The module a pass or scanner works on. */
  HtpModule *(*pass_module)(HtpHost *host, HtpPassContext *ctx);
  /** The diagnostic sink of the invocation. */
  HtpDiag *(*pass_diag)(HtpHost *host, HtpPassContext *ctx);
  /** An invocation option as JSON text ("target", or a pass parameter); HTP_ERR_NOT_FOUND when absent. */
  HtpStatus (*pass_option)(HtpHost *host, HtpPassContext *ctx, HtpStr key, HtpStr *json_out);
  /** Writes a package file through the host's package writer (relative path, no ".."); emit passes only. */
  HtpStatus (*pass_write_file)(HtpHost *host, HtpPassContext *ctx, HtpStr path, HtpStr bytes, HtpStr role,
                               HtpDiag *sink);
  /** Records an obligation (capability text, e.g. "Uses.Intrinsic(set=pto,op=add)") raised at `span`. */
  HtpStatus (*obligation_add)(HtpHost *host, HtpPassContext *ctx, HtpStr capability, const HtpSpan *span,
                              HtpDiag *sink);

  /* ---- ABI 1.1: field access by index, for hot loops (look the index up once per kind, then reuse). ---- */

  /** The index of field `name` in node kind `kind`, or -1; stable for the process. */
  int32_t (*ast_field_index)(HtpHost *host, int32_t kind, HtpStr name);
  /** The node in field `index` of `node` (NULL when null, not a node field, or out of range). */
  HtpNode *(*node_child_at)(HtpHost *host, const HtpNode *node, int32_t index);

  /* ---- ABI 1.5: islands. ---- */

  /** Runs an island step for the pass invocation `ctx`; on HTP_OK *output holds the tool's output, valid
   *  until the invocation ends. Failures are reported into the invocation's diagnostics (HTP_ERR). */
  HtpStatus (*island_run)(HtpHost *host, HtpPassContext *ctx, const HtpIslandStep *step, HtpStr *output);
} HtpHostApi;

/* ---- Plugin entry ---------------------------------------------------------------------------- */

/** What htp_plugin_query returns: a static, immutable description of the plugin. */
typedef struct HtpPluginInfo {
  size_t struct_size; /**< sizeof(HtpPluginInfo) as compiled by the plugin. */
  uint32_t abi_major; /**< HTP_ABI_MAJOR the plugin was built against. */
  uint32_t abi_minor; /**< HTP_ABI_MINOR the plugin was built against. */
  const char *name;   /**< Plugin name, NUL-terminated, [a-z0-9-]+, e.g. "dialect-wsp". */
  const char *version; /**< Plugin semantic version, NUL-terminated. */
  /** Registers the plugin's components; returns HTP_OK or an error described in diag. */
  HtpStatus (*init)(const HtpHostApi *api, HtpDiag *diag);
  /** Releases what init acquired; called once before the host exits; may be NULL. */
  void (*shutdown)(void);
  /* ABI 1.1 */
  const char *description; /**< One line describing the plugin; may be NULL. */
  const char *sdk_version; /**< HTP SDK version the plugin was built with; may be NULL. */
} HtpPluginInfo;

/** Signature of the entry symbol: side-effect free; returns static data or NULL. */
typedef const HtpPluginInfo *(*HtpPluginQueryFn)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HTP_ABI_H */
