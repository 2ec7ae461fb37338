# ACCY_CHECK_CFLAGS(VARIABLE, FLAGS)
# Appends each flag of FLAGS that the C compiler accepts (with -Werror) to
# VARIABLE and AC_SUBSTs it.
AC_DEFUN([ACCY_CHECK_CFLAGS], [
  for accy_flag in $2; do
    AC_MSG_CHECKING([whether $CC accepts $accy_flag])
    accy_save_CFLAGS=$CFLAGS
    CFLAGS="$CFLAGS -Werror $accy_flag"
    AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [])],
      [AC_MSG_RESULT([yes]); $1="$$1 $accy_flag"],
      [AC_MSG_RESULT([no])])
    CFLAGS=$accy_save_CFLAGS
  done
  AC_SUBST([$1])
])

# ACCY_CHECK_LDFLAG_VERSION_SCRIPT
# Defines the automake conditional HAVE_LD_VERSION_SCRIPT when the linker
# accepts -Wl,--version-script.
AC_DEFUN([ACCY_CHECK_LDFLAG_VERSION_SCRIPT], [
  AC_MSG_CHECKING([whether the linker accepts --version-script])
  echo "ACCY_PROBE { global: main; local: *; };" > conftest.map
  accy_save_LDFLAGS=$LDFLAGS
  LDFLAGS="$LDFLAGS -Wl,--version-script=conftest.map"
  AC_LINK_IFELSE([AC_LANG_PROGRAM([], [])],
    [accy_have_vs=yes], [accy_have_vs=no])
  LDFLAGS=$accy_save_LDFLAGS
  rm -f conftest.map
  AC_MSG_RESULT([$accy_have_vs])
  AM_CONDITIONAL([HAVE_LD_VERSION_SCRIPT], [test "x$accy_have_vs" = xyes])
])
