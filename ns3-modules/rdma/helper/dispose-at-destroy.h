/*
 * Disposal of the objects a fabric helper creates that no Node owns.
 *
 * ns-3 disposes nodes (and through them their devices and applications) when
 * Simulator::Destroy runs, because NodeList schedules it. Ports, links, switches
 * and HCAs that are plain Objects have no such owner. They refer to each other (a
 * port to its peer and its link, a callback to the switch it feeds), so the
 * reference counts of such a cycle never reach zero: without Dispose, which clears
 * those references, the objects outlive the run and LeakSanitizer reports them.
 */
#ifndef FABEMU_DISPOSE_AT_DESTROY_H
#define FABEMU_DISPOSE_AT_DESTROY_H

#include "ns3/object.h"
#include "ns3/ptr.h"

namespace ns3
{

/**
 * Has \p object disposed when Simulator::Destroy runs, as NodeList does for nodes.
 * Call it once per object, and only for objects that nothing else disposes: an
 * object is disposed once.
 */
void DisposeAtDestroy(Ptr<Object> object);

/// The same, returning \p object: `Ptr<PciePort> p =
/// DisposedAtDestroy(factory.Create<PciePort>());`
template <typename T>
Ptr<T>
DisposedAtDestroy(Ptr<T> object)
{
    DisposeAtDestroy(object);
    return object;
}

} // namespace ns3

#endif
