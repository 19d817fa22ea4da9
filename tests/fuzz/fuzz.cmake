# The fuzz targets (tests/fuzz/README.md).  Each fuzz_<name>.cpp builds as
#   fuzz_replay_<name>: runs the committed corpus tests/fuzz/corpus/<name>/
#                       (any compiler; the ctest fuzz_corpus_<name>) and the
#                       corpus fuzzing grew, tests/fuzz/grown/<name>.tar.xz,
#                       unpacked at test time (fuzz_grown_<name>);
#   fuzz_<name>:        the libFuzzer program, with -DRESET_FUZZ=ON (clang).
set(RESET_FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR})
set(RESET_FUZZ_GROWN ${CMAKE_CURRENT_BINARY_DIR}/fuzz-grown)
file(MAKE_DIRECTORY ${RESET_FUZZ_GROWN})
set(RESET_FUZZ_TARGETS model_load tokenizer_load tokenize json policy session sequence_file serve_request)
# serve_request reads requests as `reset serve` does: that command's request reader and helpers.
set(RESET_FUZZ_SOURCES_serve_request ${PROJECT_SOURCE_DIR}/samples/reset/serve_request.cpp
                                     ${PROJECT_SOURCE_DIR}/samples/reset/common.cpp)
set(RESET_FUZZ_INCLUDES_serve_request ${PROJECT_SOURCE_DIR}/samples/reset)
# fuzz_replays: every replay program, so a build that runs the fuzz_ tests
# (scripts/test.sh's sanitizer build) cannot miss a new target.
add_custom_target(fuzz_replays)
foreach(_name ${RESET_FUZZ_TARGETS})
  set(_programs fuzz_replay_${_name})
  add_dependencies(fuzz_replays fuzz_replay_${_name})
  add_executable(fuzz_replay_${_name} ${RESET_FUZZ_DIR}/fuzz_${_name}.cpp ${RESET_FUZZ_DIR}/fuzz_support.cpp
                                      ${RESET_FUZZ_DIR}/replay_main.cpp ${RESET_FUZZ_SOURCES_${_name}}
                                      $<TARGET_OBJECTS:reset_objects>)
  if(RESET_FUZZ)
    add_executable(fuzz_${_name} ${RESET_FUZZ_DIR}/fuzz_${_name}.cpp ${RESET_FUZZ_DIR}/fuzz_support.cpp
                                 ${RESET_FUZZ_SOURCES_${_name}} $<TARGET_OBJECTS:reset_objects>)
    target_link_options(fuzz_${_name} PRIVATE -fsanitize=fuzzer)
    list(APPEND _programs fuzz_${_name})
  endif()
  foreach(_program ${_programs})
    target_link_libraries(${_program} PRIVATE reset_objects)
    target_compile_options(${_program} PRIVATE ${RESET_CXX_WARNINGS} ${RESET_SANITIZER_FLAGS})
    target_include_directories(${_program} PRIVATE ${RESET_FUZZ_INCLUDES_${_name}})
    target_compile_definitions(${_program} PRIVATE RESET_SHARED_DIR="${PROJECT_SOURCE_DIR}/../shared"
                                                       RESET_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  endforeach()
  add_test(NAME fuzz_corpus_${_name} COMMAND fuzz_replay_${_name} ${RESET_FUZZ_DIR}/corpus/${_name})
  # Exit 77: skipped (fuzz_tokenize without ../shared).  In sanitizer builds: a huge allocation a malformed
  # file asks for must become std::bad_alloc (RESET_ERR_OUT_OF_MEMORY, which the targets accept), not an
  # AddressSanitizer abort.
  add_test(NAME fuzz_grown_unpack_${_name} COMMAND ${CMAKE_COMMAND} -E tar xJf ${RESET_FUZZ_DIR}/grown/${_name}.tar.xz
           WORKING_DIRECTORY ${RESET_FUZZ_GROWN})
  set_tests_properties(fuzz_grown_unpack_${_name} PROPERTIES FIXTURES_SETUP fuzz_grown_${_name})
  add_test(NAME fuzz_grown_${_name} COMMAND fuzz_replay_${_name} ${RESET_FUZZ_GROWN}/${_name})
  set_tests_properties(fuzz_grown_${_name} PROPERTIES FIXTURES_REQUIRED fuzz_grown_${_name})
  set_tests_properties(fuzz_corpus_${_name} fuzz_grown_${_name} PROPERTIES SKIP_RETURN_CODE 77
                       ENVIRONMENT "ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1")
endforeach()
