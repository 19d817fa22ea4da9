# Binding tests (issue 9): one driver script per language, all checked
# against what the C program decodes.  binding_ids runs first (a ctest
# fixture) and writes prompt.txt / expected.txt into ${RESET_BINDING_IDS}.
# A driver whose toolchain is missing exits 77: ctest reports it SKIPPED.
set(RESET_BINDING_IDS ${PROJECT_BINARY_DIR}/binding-ids)
file(MAKE_DIRECTORY ${RESET_BINDING_IDS})

add_executable(c_binding_test ${CMAKE_CURRENT_LIST_DIR}/c_binding_test.c)
target_link_libraries(c_binding_test PRIVATE reset)
target_compile_options(c_binding_test PRIVATE -Wall -Wextra -Werror)
find_package(Threads REQUIRED)
target_link_libraries(c_binding_test PRIVATE Threads::Threads)

add_test(NAME binding_ids COMMAND c_binding_test ids ${PROJECT_SOURCE_DIR} ${RESET_BINDING_IDS})
set_tests_properties(binding_ids PROPERTIES FIXTURES_SETUP binding_ids)
add_test(NAME binding_c_cancel COMMAND c_binding_test cancel ${PROJECT_SOURCE_DIR})

# Leaks: valgrind counts every byte, where the runtime allows it (not under
# ASan, whose allocator it cannot wrap).
find_program(RESET_VALGRIND valgrind)
if(RESET_VALGRIND AND NOT RESET_SANITIZE)
  add_test(NAME binding_c_leaks
           COMMAND ${RESET_VALGRIND} --quiet --leak-check=full --errors-for-leak-kinds=definite,indirect
                   --suppressions=${CMAKE_CURRENT_LIST_DIR}/valgrind.supp
                   --error-exitcode=1 $<TARGET_FILE:c_binding_test> churn ${PROJECT_SOURCE_DIR} 1000)
else()
  add_test(NAME binding_c_leaks COMMAND c_binding_test churn ${PROJECT_SOURCE_DIR} 1000)
endif()

foreach(_language python rust go java)
  add_test(NAME binding_${_language}
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/${_language}.sh ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR})
  set_tests_properties(binding_${_language} PROPERTIES FIXTURES_REQUIRED binding_ids SKIP_RETURN_CODE 77
                       ENVIRONMENT "RESET_BINDING_IDS=${RESET_BINDING_IDS}")
endforeach()
