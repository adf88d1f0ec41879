# KOLO_SANITIZE=address builds with AddressSanitizer + UndefinedBehaviorSanitizer,
# KOLO_SANITIZE=thread with ThreadSanitizer. Applied to everything we build.
if(KOLO_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
elseif(KOLO_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT KOLO_SANITIZE STREQUAL "")
  message(FATAL_ERROR "KOLO_SANITIZE must be '', 'address' or 'thread', not '${KOLO_SANITIZE}'")
endif()
