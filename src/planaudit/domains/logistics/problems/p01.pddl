;; One city: the truck must drive to the package, load it, drive to
;; the destination and unload it.
(define (problem logistics-p01)
  (:domain logistics)
  (:objects
    city1 - city
    ap1 - airport
    l1a l1b - location
    t1 - truck
    p1 - package)
  (:init
    (in-city ap1 city1) (in-city l1a city1) (in-city l1b city1)
    (at t1 ap1)
    (at p1 l1a)
    (= (total-cost) 0))
  (:goal (and
    (at p1 l1b)))
  (:metric minimize (total-cost)))
