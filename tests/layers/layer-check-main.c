/* The program of the layer checks (mcp-adapter/meson.build, runtime/meson.build): each
 * links one layer's whole library with only the libraries that layer may use, so that a
 * call against docs/ARCHITECTURE.md's layer order fails the build as an undefined
 * reference. It is never run. */
int main(void);

int
main(void)
{
        return 0;
}
