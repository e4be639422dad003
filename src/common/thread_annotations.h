// Clang's thread-safety annotations (https://clang.llvm.org/docs/ThreadSafetyAnalysis.html).
// With clang and -Wthread-safety the compiler checks that every GUARDED_BY member is
// accessed with its mutex held and every REQUIRES function is called with it; with other
// compilers the macros expand to nothing. The lockable types are in common/mutex.h.
#pragma once

#if defined(__clang__)
#define XET_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define XET_THREAD_ANNOTATION(x)
#endif

// A type that is a lock ("mutex"), or an RAII object that holds one for its scope.
#define CAPABILITY(x) XET_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY XET_THREAD_ANNOTATION(scoped_lockable)

// A member read or written only with `x` held; PT_: the data it points to.
#define GUARDED_BY(x) XET_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) XET_THREAD_ANNOTATION(pt_guarded_by(x))

// A function called with the lock(s) held (exclusively, or at least shared), or not held.
#define REQUIRES(...) XET_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) XET_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
#define EXCLUDES(...) XET_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))

// A function that takes or gives up the lock(s) (none named: `this`).
#define ACQUIRE(...) XET_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) XET_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) XET_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) XET_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
// Takes the lock when it returns `ok` (the first argument).
#define TRY_ACQUIRE(...) XET_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
// Tells the analysis the lock is held from here on (a run-time assertion, or a promise).
#define ASSERT_CAPABILITY(x) XET_THREAD_ANNOTATION(assert_capability(x))
// A function that returns a reference to the lock `x`.
#define RETURN_CAPABILITY(x) XET_THREAD_ANNOTATION(lock_returned(x))

// Turns the analysis off for one function; every use says why in a comment.
#define NO_THREAD_SAFETY_ANALYSIS XET_THREAD_ANNOTATION(no_thread_safety_analysis)
