# xgrammar's C++ core (the grammar engine behind structured output), built from
# the sdist that scripts/fetch_xgrammar.sh unpacks into third_party/. Only the
# core: no Python bindings, no tests, no cpptrace. Its logging goes through
# ladder (engine/xgrammar_log.cpp), so that the warnings xgrammar gives when it
# would drop a constraint can refuse the request instead.
set(LADDER_XGRAMMAR_VERSION 0.2.9)
set(LADDER_XGRAMMAR_DIR ${PROJECT_SOURCE_DIR}/third_party/xgrammar-${LADDER_XGRAMMAR_VERSION}
    CACHE PATH "Unpacked xgrammar sdist")
if(NOT EXISTS ${LADDER_XGRAMMAR_DIR}/cpp/grammar_compiler.cc)
    message(FATAL_ERROR "xgrammar ${LADDER_XGRAMMAR_VERSION} not found in ${LADDER_XGRAMMAR_DIR}: "
                        "run scripts/fetch_xgrammar.sh (make deps does)")
endif()

# The sanitizer and fuzz builds may link the archive a Release build made from
# the same sources (LADDER_XGRAMMAR_PREBUILT) instead of compiling it again:
# it is third-party code that we neither fuzz nor check for races, and its 40
# heavy files compiled three times were a third of what CI spent compiling.
set(LADDER_XGRAMMAR_PREBUILT "" CACHE FILEPATH
    "libxgrammar.a built from the same sources (empty: build it here)")
if(LADDER_XGRAMMAR_PREBUILT)
    if(NOT EXISTS ${LADDER_XGRAMMAR_PREBUILT})
        message(FATAL_ERROR "LADDER_XGRAMMAR_PREBUILT: ${LADDER_XGRAMMAR_PREBUILT} does not exist "
                            "(build the Release configuration first: make build)")
    endif()
    add_library(xgrammar STATIC IMPORTED)
    set_target_properties(xgrammar PROPERTIES IMPORTED_LOCATION ${LADDER_XGRAMMAR_PREBUILT})
    set(xgrammar_usage INTERFACE)
else()
    file(GLOB_RECURSE xgrammar_sources CONFIGURE_DEPENDS ${LADDER_XGRAMMAR_DIR}/cpp/*.cc)
    list(FILTER xgrammar_sources EXCLUDE REGEX "/cpp/tvm_ffi/")
    add_library(xgrammar STATIC ${xgrammar_sources})
    set_target_properties(xgrammar PROPERTIES CXX_STANDARD 17 POSITION_INDEPENDENT_CODE ON)
    # Its sources are not ours to keep warning-free (-w: our -Werror must not
    # fail on a newer compiler's opinion of them), nor to debug (-g0).
    target_compile_options(xgrammar PRIVATE -w -g0)
    set(xgrammar_usage PUBLIC)
endif()
target_include_directories(xgrammar ${xgrammar_usage} ${LADDER_XGRAMMAR_DIR}/include)
target_include_directories(xgrammar SYSTEM ${xgrammar_usage}
                           ${LADDER_XGRAMMAR_DIR}/3rdparty/picojson
                           ${LADDER_XGRAMMAR_DIR}/3rdparty/dlpack/include)
target_compile_definitions(xgrammar ${xgrammar_usage} XGRAMMAR_ENABLE_CPPTRACE=0
                           XGRAMMAR_ENABLE_INTERNAL_CHECK=0 XGRAMMAR_LOG_CUSTOMIZE=1)
target_link_libraries(xgrammar ${xgrammar_usage} Threads::Threads)

# The internal headers (support/logging.h), for the one file that implements
# xgrammar's logging hooks.
set(LADDER_XGRAMMAR_INTERNAL_INCLUDE ${LADDER_XGRAMMAR_DIR}/cpp)
