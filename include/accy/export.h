/* accy/export.h: ACCY_API, the mark on every public function.
 *
 * While libaccy itself is built (ACCY_BUILDING), ACCY_API gives a function
 * default visibility; everything else is built hidden (-fvisibility=hidden)
 * and src/libaccy.map lists the exported names once more. For users it is
 * empty. Every public header that declares functions includes this one. */
#ifndef ACCY_EXPORT_H
#define ACCY_EXPORT_H

#if defined(ACCY_BUILDING) && defined(__GNUC__)
#define ACCY_API __attribute__((visibility("default")))
#else
#define ACCY_API
#endif

#endif /* ACCY_EXPORT_H */
