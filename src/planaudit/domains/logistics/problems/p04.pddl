;; Two cities, two packages travelling in opposite directions plus
;; one staying local: a single airplane should carry one package
;; on each leg, and trucks should combine deliveries.
(define (problem logistics-p04)
  (:domain logistics)
  (:objects
    city1 city2 - city
    ap1 ap2 - airport
    l1a l1b l2a l2b - location
    t1 t2 - truck
    a1 - airplane
    p1 p2 p3 - package)
  (:init
    (in-city ap1 city1) (in-city l1a city1) (in-city l1b city1)
    (in-city ap2 city2) (in-city l2a city2) (in-city l2b city2)
    (at t1 ap1)
    (at t2 ap2)
    (at a1 ap1)
    (at p1 l1a)
    (at p2 l2a)
    (at p3 l1b)
    (= (total-cost) 0))
  (:goal (and
    (at p1 l2b)
    (at p2 l1b)
    (at p3 ap1)))
  (:metric minimize (total-cost)))
