/* The system calls newlib(-nano) needs for stdio: stdout and stderr go to
 * the board console; there is no file system and no input. The heap exists
 * only for newlib's own internals (float formatting); ptec never allocates. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "ptec_board.h"

extern char __heap_start[];
extern char __heap_end[];

int _write(int fd, const char *data, int len);
int _read(int fd, char *data, int len);
int _close(int fd);
int _lseek(int fd, int offset, int whence);
int _fstat(int fd, struct stat *st);
int _isatty(int fd);
void *_sbrk(ptrdiff_t increment);
int _kill(int pid, int sig);
int _getpid(void);
_Noreturn void _exit(int code);

int _write(int fd, const char *data, int len)
{
    if (fd != 1 && fd != 2) {
        errno = EBADF;
        return -1;
    }
    ptec_board_console_write(data, (size_t)len);
    return len;
}

int _read(int fd, char *data, int len)
{
    (void)fd;
    (void)data;
    (void)len;
    return 0;
}

int _close(int fd)
{
    (void)fd;
    errno = EBADF;
    return -1;
}

int _lseek(int fd, int offset, int whence)
{
    (void)fd;
    (void)offset;
    (void)whence;
    return 0;
}

int _fstat(int fd, struct stat *st)
{
    (void)fd;
    st->st_mode = S_IFCHR;
    return 0;
}

int _isatty(int fd)
{
    return fd >= 0 && fd <= 2;
}

void *_sbrk(ptrdiff_t increment)
{
    static char *brk = __heap_start;
    if (increment > __heap_end - brk || increment < __heap_start - brk) {
        errno = ENOMEM;
        return (void *)-1;
    }
    char *previous = brk;
    brk += increment;
    return previous;
}

int _kill(int pid, int sig)
{
    (void)pid;
    (void)sig;
    errno = EINVAL;
    return -1;
}

int _getpid(void)
{
    return 1;
}

void _exit(int code)
{
    ptec_board_exit(code);
}
